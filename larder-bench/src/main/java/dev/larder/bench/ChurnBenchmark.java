package dev.larder.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Larder under churn with explicit removals, as a session store or an invalidated cache sees it:
 * each operation inserts a new key and removes the key the same thread inserted {@code size}
 * operations before, into a cache filled to its entry bound. The cache stays at its bound, so
 * every insert that lands in a partition at its share must borrow a slot another partition's
 * removal freed, or evict. Larder only (the peers' adapters have no removal); compare builds,
 * and partition counts with {@code -Dlarder.bench.partitions=N}.
 *
 * <pre>{@code
 * java -jar larder-bench/target/benchmarks.jar ChurnBenchmark -p size=100000,1000000 -t 1
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class ChurnBenchmark {
    @Param({"100000", "1000000"})
    int size;

    @Param({"256"})
    int valueSize;

    LarderAdapter cache;

    /** Keys the threads insert in turn; thread t takes t, t + threads, t + 2 × threads, ... */
    String[] keys;

    @Setup(Level.Trial)
    public void setUp() {
        cache = new LarderAdapter(size, valueSize);
        // A thread that wraps around the pool inserts keys it removed long ago: still new keys.
        keys = Keys.keys(0, Math.max(4 * size, 1 << 20));
        for (int i = 0; i < size; i++) {
            cache.put(keys[i], Keys.value(i, valueSize));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        cache.close();
    }

    /** A thread's position in the key pool, and its value. */
    @State(Scope.Thread)
    public static class ThreadState {
        int next;
        int stride;
        int lag;
        byte[] value;

        @Setup(Level.Trial)
        public void setUp(ChurnBenchmark bench, ThreadParams threads) {
            init(bench, threads.getThreadIndex(), threads.getThreadCount());
        }

        void init(ChurnBenchmark bench, int threadIndex, int threadCount) {
            stride = threadCount;
            // The fill took keys [0, size); this thread goes on from there, removing its share of
            // the filled keys first, then the keys it inserted itself.
            next = bench.size + threadIndex;
            lag = bench.size - bench.size % stride; // a multiple of the stride: the same thread's key
            value = Keys.value(-1 - threadIndex, bench.valueSize);
        }
    }

    @Benchmark
    public void insertAndRemove(ThreadState t) {
        String[] pool = keys;
        int n = pool.length;
        int i = t.next;
        cache.cache.put(pool[i], t.value);
        cache.cache.remove(pool[Math.floorMod(i - t.lag, n)]);
        i += t.stride;
        t.next = i >= n ? i - n : i;
    }
}
