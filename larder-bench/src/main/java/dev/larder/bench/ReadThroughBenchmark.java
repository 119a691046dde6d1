package dev.larder.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Read-through: look the key up; on a miss burn a fixed amount of CPU (the cost of loading the
 * value from somewhere slower) and put the value. Keys come from a universe ten times the cache's
 * capacity, drawn online either
 *
 * <ul>
 *   <li>{@code zipf}: by a Zipf generator (exponent {@code zipfExponent}, rank 1 most popular),
 *       the skew of real key popularity; a better eviction policy shows as a higher hit rate and
 *       so a lower time per operation; or
 *   <li>{@code uniform}: uniformly, the worst case for any policy: a cache that honours its size
 *       hits about one request in ten whatever it evicts, so a higher hit rate means it holds more
 *       entries than it was sized for.
 * </ul>
 *
 * <p>The effective hit rate is reported through the {@code hits} and {@code misses} counters. The
 * cache is brought to steady state (three capacities of requests without the miss penalty) before
 * measuring. Chronicle Map does not evict, so the scenario does not apply to it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class ReadThroughBenchmark extends PeersForked {
    /** Universe of keys, in multiples of the capacity. */
    static final int UNIVERSE_FACTOR = 10;

    @Param({"larder", "caffeine", "ohc", "ehcache", "mapdb", "cache2k"})
    public String cache;

    @Param({"100000"})
    public int size;

    @Param({"zipf", "uniform"})
    public String distribution;

    @Param({"0.99"})
    public double zipfExponent;

    @Param({"256"})
    public int valueSize;

    /** Blackhole.consumeCPU tokens burned per miss. */
    @Param({"1000"})
    public int missPenaltyTokens;

    BenchCache target;
    String[] universe;
    byte[] loadedValue;
    ZipfGenerator zipf;

    @Setup(Level.Trial)
    public void setUp() {
        target = Caches.create(cache, size, valueSize);
        if (!target.evicts()) {
            target.close();
            throw new UnsupportedOperationException(
                    cache + " does not evict; the read-through scenarios do not apply to it");
        }
        long universeSize = (long) size * UNIVERSE_FACTOR;
        if (universeSize > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("size too large for the read-through universe: " + size);
        }
        universe = Keys.keys(0, (int) universeSize);
        loadedValue = Keys.value(42, valueSize);
        zipf = "zipf".equals(distribution) ? new ZipfGenerator(universeSize, zipfExponent) : null;
        if (zipf == null && !"uniform".equals(distribution)) {
            throw new IllegalArgumentException("distribution must be zipf or uniform, was " + distribution);
        }
        // Steady state: three capacities of requests, misses loaded without the penalty.
        SplittableRandom random = new SplittableRandom(7);
        for (long i = 0, n = 3L * size; i < n; i++) {
            String key = universe[nextIndex(random)];
            if (target.get(key) == null) {
                target.put(key, loadedValue);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        target.close();
    }

    int nextIndex(SplittableRandom random) {
        return zipf != null ? (int) (zipf.next(random) - 1) : random.nextInt(universe.length);
    }

    /** Each thread's random source. */
    @State(Scope.Thread)
    public static class ThreadState {
        SplittableRandom random;

        @Setup(Level.Trial)
        public void setUp(ThreadParams threads) {
            random = new SplittableRandom(1000 + threads.getThreadIndex());
        }
    }

    /** Hits and misses per iteration, summed over threads; hit rate = hits / (hits + misses). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class HitCounters {
        public long hits;
        public long misses;

        @Setup(Level.Iteration)
        public void reset() {
            hits = 0;
            misses = 0;
        }
    }

    @Benchmark
    public byte[] readThrough(ThreadState t, HitCounters counters) {
        String key = universe[nextIndex(t.random)];
        byte[] value = target.get(key);
        if (value != null) {
            counters.hits++;
            return value;
        }
        counters.misses++;
        Blackhole.consumeCPU(missPenaltyTokens);
        target.put(key, loadedValue);
        return loadedValue;
    }
}
