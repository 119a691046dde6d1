package dev.larder.bench;

import dev.larder.ValueReader;
import java.lang.foreign.ValueLayout;
import java.util.List;
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
 * Larder's zero-copy GET ({@code read(key, seg -> seg.get(JAVA_BYTE, 0))}) beside its copying
 * {@code getIfPresent}, on the same filled cache, so {@code -prof gc} shows what each allocates.
 *
 * <p>{@code readZeroCopyFourReaders} passes four different readers in turn, as a service whose
 * calls to {@code read} come from several places may: the cache's call of the reader is then
 * megamorphic, the JIT inlines none of them, and the value's view (a {@code MemorySegment}
 * slice) escapes and is allocated. {@code bench.sh} publishes the first two only.
 */
@BenchmarkMode({Mode.AverageTime, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch", Peer.Flags.NATIVE_ACCESS})
@State(Scope.Benchmark)
public class LarderZeroCopyBenchmark {
    @Param({"10000", "100000", "1000000"})
    public int size;

    @Param({"256"})
    public int valueSize;

    LarderAdapter larder;
    String[] keys;

    @Setup(Level.Trial)
    public void setUp() {
        larder = (LarderAdapter) Caches.create(Peer.LARDER.id(), size, valueSize);
        keys = Keys.keys(0, size);
        for (int i = 0; i < size; i++) {
            larder.put(keys[i], Keys.value(i, valueSize));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        larder.close();
    }

    @State(Scope.Thread)
    public static class ThreadState {
        long seed;

        @Setup(Level.Trial)
        public void setUp(ThreadParams threads) {
            seed = 0x9E3779B97F4A7C15L * (threads.getThreadIndex() + 1);
        }

        int nextIndex(int bound) {
            seed = Keys.xorshift(seed);
            return Keys.indexBelow(seed, bound);
        }
    }

    @Benchmark
    public int readZeroCopy(ThreadState t) {
        return larder.readFirstByte(keys[t.nextIndex(size)]);
    }

    /** Readers of the value's first four bytes; each returns a cached {@code Byte}, no allocation. */
    private static final List<ValueReader<Byte>> FOUR_READERS = List.of(
            seg -> seg.get(ValueLayout.JAVA_BYTE, 0),
            seg -> seg.get(ValueLayout.JAVA_BYTE, 1),
            seg -> seg.get(ValueLayout.JAVA_BYTE, 2),
            seg -> seg.get(ValueLayout.JAVA_BYTE, 3));

    @Benchmark
    public Byte readZeroCopyFourReaders(ThreadState t) {
        int i = t.nextIndex(size);
        return larder.cache.read(keys[i], FOUR_READERS.get(i & 3));
    }

    @Benchmark
    public byte[] getCopy(ThreadState t) {
        return larder.get(keys[t.nextIndex(size)]);
    }
}
