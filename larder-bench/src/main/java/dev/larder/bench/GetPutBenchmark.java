package dev.larder.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * GET and PUT on a cache filled to its capacity of {@code size} entries (16-byte keys,
 * {@code valueSize}-byte values). Every key is made before the measured loop; threads draw key
 * indexes from their own xorshift generator, so the loop itself allocates nothing.
 *
 * <ul>
 *   <li>{@code get}: a uniformly random present key (every call a hit).
 *   <li>{@code putOverwrite}: replaces the value of a uniformly random present key.
 *   <li>{@code putInsert}: cycles through a pool of {@link #insertPoolSize} keys (64 × size, at
 *       most 16M, at least 2 × size), none of them in the cache at first; almost every put is a
 *       new key, so the cache evicts. A pool of only 2 × size keys, used until 2026-11-24, is a
 *       loop: a frequency-aware cache keeps part of it, and Larder and Caffeine found about half
 *       of those "inserts" already present, so half of them were cheap overwrites. With the pool
 *       below they find 0% present at 10K (four passes) and at 1M 1.3% and 0.6% on the second
 *       pass, the first that can find any (measured 2026-11-24 by a put-by-put count).
 *   <li>{@code putResize}: replaces the value of a uniformly random present key with one of
 *       {@link #RESIZE_SIZES} lengths from 3/4 to 5/4 of {@code valueSize}, taking turns, so 7 in
 *       8 puts change the key's value length (a document that gains a field, a list that grows).
 *       Run by hand ({@code bench.sh} publishes the three above), e.g. {@code java -jar
 *       larder-bench/target/benchmarks.jar 'GetPutBenchmark.putResize$' -p cache=larder,ohc}.
 *   <li>{@code getMostly}: nine GETs to one overwrite of uniformly random present keys, drawn
 *       per call; run by hand as {@code putResize} is.
 * </ul>
 *
 * <p>{@code keyInstances}: {@code same} (the default, and what {@code bench.sh} runs) has
 * {@code get} and {@code putOverwrite} pass the very {@code String} objects the cache was filled
 * with, so an on-heap cache's key comparison is an identity check that touches neither string's
 * characters; {@code equal} passes equal strings made apart (made before the loop, as a service
 * builds a request's key), so an on-heap cache compares the characters of both, as it does in
 * production. An off-heap cache reads the given string's characters either way.
 *
 * <p>{@code bench.sh} starts each cache's forks with only that cache's JVM flags; the union in
 * {@link PeersForked} is for running the jar by hand.
 */
@BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class GetPutBenchmark extends PeersForked {
    @Param({"larder", "caffeine", "ohc", "chronicle", "ehcache", "mapdb", "cache2k"})
    public String cache;

    @Param({"10000", "100000", "1000000"})
    public int size;

    @Param({"256"})
    public int valueSize;

    @Param({"same"})
    public String keyInstances;

    BenchCache target;
    String[] keys;
    /** The keys {@code get} and {@code putOverwrite} pass: {@link #keys} or equal copies (see above). */
    String[] presentKeys;

    String[] insertKeys;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        boolean inserting = params.getBenchmark().endsWith(".putInsert");
        target = Caches.create(cache, size, valueSize);
        if (inserting && !target.evicts()) {
            target.close();
            throw new UnsupportedOperationException(
                    cache + " does not evict; putInsert (insert with eviction)" + " does not apply to it");
        }
        keys = Keys.keys(0, size);
        Fill.fill(target, cache, keys, valueSize);
        insertKeys = inserting ? Keys.keys(size, insertPoolSize(size)) : null;
        presentKeys = switch (keyInstances) {
            case "same" -> keys;
            case "equal" -> Keys.keys(0, size); // new strings, equal to the cache's keys
            default -> throw new IllegalArgumentException("keyInstances must be same or equal: " + keyInstances);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        target.close();
    }

    /** Most keys an insert pool holds: 16M keys are about 1 GB of heap. */
    static final int MAX_INSERT_POOL = 16 << 20;

    /** Keys {@code putInsert} cycles through for a cache of {@code size} entries. */
    static int insertPoolSize(int size) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(2L * size, Math.min(64L * size, MAX_INSERT_POOL)));
    }

    /** Each thread's key generator, value and share of the insert keys. */
    @State(Scope.Thread)
    public static class ThreadState {
        long seed;
        byte[] value;
        /** Values of {@link #RESIZE_SIZES} lengths around {@code valueSize}, for {@code putResize}. */
        byte[][] resized;

        int resizeTurn;
        int insertNext;
        int insertStride;

        @Setup(Level.Trial)
        public void setUp(GetPutBenchmark bench, ThreadParams threads) {
            seed = 0x9E3779B97F4A7C15L * (threads.getThreadIndex() + 1);
            value = Keys.value(-1 - threads.getThreadIndex(), bench.valueSize);
            resized = new byte[RESIZE_SIZES][];
            for (int i = 0; i < RESIZE_SIZES; i++) {
                resized[i] = Keys.value(-1 - threads.getThreadIndex(), resizedLength(bench.valueSize, i));
            }
            insertNext = threads.getThreadIndex();
            insertStride = threads.getThreadCount();
        }

        /** A uniformly random index in [0, bound). */
        int nextIndex(int bound) {
            seed = Keys.xorshift(seed);
            return Keys.indexBelow(seed, bound);
        }

        int nextInsert(int bound) {
            int i = insertNext;
            insertNext += insertStride;
            if (insertNext >= bound) {
                insertNext -= bound;
            }
            return i;
        }
    }

    @Benchmark
    public byte[] get(ThreadState t) {
        return target.get(presentKeys[t.nextIndex(size)]);
    }

    @Benchmark
    public void putOverwrite(ThreadState t) {
        target.put(presentKeys[t.nextIndex(size)], t.value);
    }

    /**
     * Nine GETs to one overwrite, of uniformly random present keys, drawn per call (a read-mostly
     * service whose values change now and then): readers meet the writers' rewrites.
     */
    @Benchmark
    public byte[] getMostly(ThreadState t) {
        int draw = t.nextIndex(10 * size);
        String key = presentKeys[draw / 10];
        if (draw % 10 == 0) {
            target.put(key, t.value);
            return t.value;
        }
        return target.get(key);
    }

    /** How many value lengths {@code putResize} takes turns with. */
    static final int RESIZE_SIZES = 8;

    /** The {@code i}-th length of {@code putResize}: from 3/4 of {@code valueSize} to 5/4, evenly. */
    static int resizedLength(int valueSize, int i) {
        return Math.max(1, valueSize * 3 / 4 + (valueSize / 2) * i / (RESIZE_SIZES - 1));
    }

    @Benchmark
    public void putResize(ThreadState t) {
        target.put(presentKeys[t.nextIndex(size)], t.resized[t.resizeTurn++ & (RESIZE_SIZES - 1)]);
    }

    @Benchmark
    public void putInsert(ThreadState t) {
        target.put(insertKeys[t.nextInsert(insertKeys.length)], t.value);
    }
}
