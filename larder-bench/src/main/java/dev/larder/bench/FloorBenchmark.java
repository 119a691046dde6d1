package dev.larder.bench;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
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
 * How fast a GET that copies its value out of native memory can be on this machine, next to
 * Caffeine's GET, which returns a reference: the floor under any off-heap cache's GET, Larder's
 * included, in {@code GetPutBenchmark.get}'s setting (16-byte keys, 256-byte values, N entries,
 * uniformly random hits, the very key objects the caches were filled with).
 *
 * <p>{@code floorGet} is not a cache: one native segment of fixed-size records (an 8-byte header,
 * the key, the value) and one open-addressing table of 8-byte words (a 16-bit tag and the record's
 * offset), filled once, read by one thread. A GET copies the key's 16 Latin-1 bytes out of the
 * {@code String} ({@code getBytes}, which would be wrong for other strings), hashes them (the
 * wyhash step Larder uses), probes the table, compares the key as two longs, and copies the value
 * into a new array: no lock or seqlock, no expiry, no statistics, no eviction policy, nothing
 * recorded. {@code floorProbe} stops before the copy (no array), {@code floorCopyInto} copies into
 * one reused array (no allocation): what the value's array and its copy cost.
 *
 * <p>Run by hand (not by {@code bench.sh}): {@code java -jar larder-bench/target/benchmarks.jar
 * FloorBenchmark -p size=10000,1000000}; compare with {@code GetPutBenchmark.get -p
 * cache=larder,caffeine} in the same minutes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch", "--enable-native-access=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class FloorBenchmark {
    @Param({"10000", "1000000"})
    public int size;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle KEY_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int KEY = 16;
    private static final int VALUE = 256;
    /** A record: an 8-byte header, the key, the value. */
    private static final int RECORD = 8 + KEY + VALUE;

    private static final long TAG_MASK = 0xFFFF_0000_0000_0000L;
    private static final long OFFSET_MASK = ~TAG_MASK;

    private Arena arena;
    private MemorySegment records;
    private MemorySegment table;
    private int slotMask;
    private final long seed = 0x2545_F491_4F6C_DD1DL;
    private String[] keys;
    private Cache<String, byte[]> caffeine;

    @Setup(Level.Trial)
    public void setUp() {
        keys = Keys.keys(0, size);
        arena = Arena.ofShared();
        records = arena.allocate((long) RECORD * size, 64);
        int slots = Integer.highestOneBit(size * 5 / 4) * 2; // load 0.3 to 0.6
        slotMask = slots - 1;
        table = arena.allocate(8L * slots, 64);
        byte[] key = new byte[KEY];
        for (int i = 0; i < size; i++) {
            long at = (long) RECORD * i;
            latin1(keys[i], key);
            records.set(LONG, at, VALUE); // the header: the value's length
            MemorySegment.copy(key, 0, records, ValueLayout.JAVA_BYTE, at + 8, KEY);
            MemorySegment.copy(Keys.value(i, VALUE), 0, records, ValueLayout.JAVA_BYTE, at + 8 + KEY, VALUE);
            long h = hash(key);
            int slot = (int) h & slotMask;
            while (table.get(ValueLayout.JAVA_LONG, 8L * slot) != 0) {
                slot = (slot + 1) & slotMask;
            }
            table.set(ValueLayout.JAVA_LONG, 8L * slot, (h & TAG_MASK) | (at + 1));
        }
        caffeine = Caffeine.newBuilder().maximumSize(size).initialCapacity(size).build();
        for (int i = 0; i < size; i++) {
            caffeine.put(keys[i], Keys.value(i, VALUE));
        }
        ThreadState check = new ThreadState();
        for (int i = 0; i < size; i++) {
            if (!java.util.Arrays.equals(get(keys[i], check.key, null), Keys.value(i, VALUE))) {
                throw new AssertionError("the floor's table lost " + keys[i]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    private static void latin1(String key, byte[] into) {
        if (key.length() != KEY) {
            throw new IllegalArgumentException("the floor takes " + KEY + "-character keys: " + key);
        }
        key.getBytes(0, KEY, into, 0);
    }

    private static long mix(long a, long b) {
        return Math.multiplyHigh(a, b) ^ (a * b);
    }

    /** Larder's hash of 16 bytes ({@code KeyHash}), unrolled. */
    private long hash(byte[] key) {
        long h = seed ^ mix(seed ^ 0xa0761d6478bd642fL, KEY ^ 0xe7037ed1a0b428dbL);
        long a = (long) KEY_LONG.get(key, 0);
        long b = (long) KEY_LONG.get(key, 8);
        return mix(0x8ebc6af09c88c6e3L ^ KEY, mix(a ^ 0xe7037ed1a0b428dbL, b ^ h) ^ 0x589965cc75374cc3L);
    }

    /**
     * The record of {@code keyString}: its value copied into {@code into} if given, else into a
     * new array; with {@code into} and no copy wanted, see {@link #floorProbe}.
     */
    private byte[] get(String keyString, byte[] key, byte[] into) {
        latin1(keyString, key);
        long h = hash(key);
        long tag = h & TAG_MASK;
        MemorySegment t = table;
        for (int slot = (int) h & slotMask; ; slot = (slot + 1) & slotMask) {
            long w = t.get(ValueLayout.JAVA_LONG, 8L * slot);
            if (w == 0) {
                return null;
            }
            if ((w & TAG_MASK) != tag) {
                continue;
            }
            long at = (w & OFFSET_MASK) - 1;
            MemorySegment r = records;
            if (r.get(LONG, at + 8) == (long) KEY_LONG.get(key, 0)
                    && r.get(LONG, at + 16) == (long) KEY_LONG.get(key, 8)) {
                int length = (int) r.get(LONG, at);
                byte[] value = into != null ? into : new byte[length];
                MemorySegment.copy(r, ValueLayout.JAVA_BYTE, at + 8 + KEY, value, 0, length);
                return value;
            }
        }
    }

    /** The probe alone: the record found and its key compared, nothing copied. */
    private long probe(String keyString, byte[] key) {
        latin1(keyString, key);
        long h = hash(key);
        long tag = h & TAG_MASK;
        for (int slot = (int) h & slotMask; ; slot = (slot + 1) & slotMask) {
            long w = table.get(ValueLayout.JAVA_LONG, 8L * slot);
            if (w == 0) {
                return -1;
            }
            long at = (w & OFFSET_MASK) - 1;
            if ((w & TAG_MASK) == tag
                    && records.get(LONG, at + 8) == (long) KEY_LONG.get(key, 0)
                    && records.get(LONG, at + 16) == (long) KEY_LONG.get(key, 8)) {
                return records.get(LONG, at);
            }
        }
    }

    /** Each thread's key generator (xorshift, as {@code GetPutBenchmark}) and scratch arrays. */
    @State(Scope.Thread)
    public static class ThreadState {
        long x = 0x9E37_79B9_7F4A_7C15L;
        final byte[] key = new byte[KEY];
        final byte[] value = new byte[VALUE];

        int next(int bound) {
            x = Keys.xorshift(x);
            return Keys.indexBelow(x, bound);
        }
    }

    @Benchmark
    public byte[] floorGet(ThreadState t) {
        return get(keys[t.next(size)], t.key, null);
    }

    @Benchmark
    public long floorProbe(ThreadState t) {
        return probe(keys[t.next(size)], t.key);
    }

    @Benchmark
    public byte[] floorCopyInto(ThreadState t) {
        return get(keys[t.next(size)], t.key, t.value);
    }

    @Benchmark
    public byte[] caffeineGet(ThreadState t) {
        return caffeine.getIfPresent(keys[t.next(size)]);
    }
}
