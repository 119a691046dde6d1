package dev.larder.bench;

import dev.larder.internal.policy.FrequencySketch;
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

/**
 * The frequency sketch's increment alone (Larder's internal {@code FrequencySketch}, one thread,
 * as maintenance runs it), for a cache of {@code capacity} entries fed keys drawn uniformly from
 * {@code keySpace} × capacity. A key space a few times the capacity keeps the counters mid-range
 * (aging halves them every 10 × capacity additions), as in a cache that evicts; a key space below
 * the capacity saturates them all at 15, where an increment only reads.
 *
 * <p>{@code java -jar larder-bench/target/benchmarks.jar FrequencySketchBenchmark -f 1 -wi 2 -w 1s
 * -i 3 -r 1s -jvmArgsAppend --enable-native-access=ALL-UNNAMED}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {Peer.Flags.NATIVE_ACCESS})
@State(Scope.Thread)
public class FrequencySketchBenchmark {
    @Param({"10000", "100000", "1000000"})
    public long capacity;

    /** Distinct keys as a multiple of the capacity (rounded up to a power of two). */
    @Param({"0.5", "8"})
    public double keySpace;

    private FrequencySketch sketch;
    private long keyMask;
    private long x = 0x9E3779B97F4A7C15L;

    @Setup(Level.Trial)
    public void setUp() {
        sketch = new FrequencySketch(capacity);
        long keys = Math.max(2, (long) (capacity * keySpace));
        keyMask = Long.highestOneBit(keys - 1) * 2 - 1;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sketch.free();
    }

    @Benchmark
    public void increment() {
        long s = x;
        s ^= s << 13;
        s ^= s >>> 7;
        s ^= s << 17;
        x = s;
        sketch.increment((s & keyMask) * 0xBF58_476D_1CE4_E5B9L);
    }
}
