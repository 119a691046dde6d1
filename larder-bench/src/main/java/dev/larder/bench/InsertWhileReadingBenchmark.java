package dev.larder.bench;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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

/**
 * One thread inserts new keys into a full cache (so it evicts) while another reads a hot set of
 * present keys: a cache whose writer hands its eviction to a background thread takes that thread's
 * core from the reader here, where {@code GetPutBenchmark} runs one kind of call per run. Run by
 * hand, e.g. {@code java -jar larder-bench/target/benchmarks.jar InsertWhileReadingBenchmark -p
 * cache=larder,ohc}: JMH prints the group's mean and each thread's ({@code insert}, {@code get}).
 *
 * <p>The reader's keys are the first tenth of the keys the cache was filled with, read uniformly:
 * read far more often than the inserted keys, a frequency-aware cache keeps them, and nearly
 * every read is a hit; an LRU cache keeps them too, since each is read every ~{@code size / 10}
 * reads.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Group)
public class InsertWhileReadingBenchmark extends PeersForked {
    @Param({"larder", "caffeine", "ohc"})
    public String cache;

    @Param({"10000", "100000", "1000000"})
    public int size;

    @Param({"256"})
    public int valueSize;

    BenchCache target;
    String[] hotKeys;
    String[] insertKeys;
    byte[] value;

    @Setup(Level.Trial)
    public void setUp() {
        target = Caches.create(cache, size, valueSize);
        String[] keys = Keys.keys(0, size);
        for (int i = 0; i < size; i++) {
            target.put(keys[i], Keys.value(i, valueSize));
        }
        hotKeys = Arrays.copyOf(keys, Math.max(1, size / 10));
        insertKeys = Keys.keys(size, GetPutBenchmark.insertPoolSize(size));
        value = Keys.value(-1, valueSize);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        target.close();
    }

    /** The writer: the next key of the insert pool (absent, as in {@code GetPutBenchmark.putInsert}). */
    @Benchmark
    @Group("insertWhileReading")
    @GroupThreads(1)
    public void insert(Cursor c) {
        int i = c.next;
        c.next = i + 1 == insertKeys.length ? 0 : i + 1;
        target.put(insertKeys[i], value);
    }

    /** The reader: a uniformly random hot key. */
    @Benchmark
    @Group("insertWhileReading")
    @GroupThreads(1)
    public byte[] get(Cursor c) {
        c.seed = Keys.xorshift(c.seed);
        return target.get(hotKeys[Keys.indexBelow(c.seed, hotKeys.length)]);
    }

    /** Each thread's own position: the writer's in the insert pool, the reader's generator. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;
        long seed = 0x9E3779B97F4A7C15L;
    }
}
