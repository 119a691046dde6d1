package dev.larder.internal.policy;

import dev.larder.internal.concurrent.OwnLineLongs;
import dev.larder.internal.memory.NativeMemory;
import java.lang.foreign.MemorySegment;

/**
 * How often each key was seen recently, approximately: a count-min sketch of 4-bit counters in
 * native memory, for TinyLFU admission.
 *
 * <p>Layout: the table is an array of 64-byte blocks, aligned to 64 bytes so a block is one
 * cache line. Each block holds 8 longs of 16 four-bit counters. A key's hash, re-mixed, picks
 * one block (its high bits, by multiplying) and, in it, 4 counters (low bits): counter {@code i} lies in long {@code
 * 2i} or {@code 2i + 1} at one of its 16 nibbles, so the 4 counters are in 4 different longs and
 * one key touches one cache line.
 *
 * <p>An increment is a conservative update: it raises only the key's counters that hold its
 * estimate (see {@link #increment}). At 3 bytes per entry the counters are few enough that
 * raising all four, as Caffeine does, fills them with other keys' counts; docs/ARCHITECTURE.md
 * §5 has the measurement.
 *
 * <p>Counters saturate at 15. Every {@link #sampleSize()} additions (increments that raised at
 * least one counter) the sketch ages: every counter is halved, and so is the number of
 * additions, so old popularity fades and the sketch follows a changing workload.
 *
 * <p>Not thread-safe: only the cache's maintenance thread uses it, under the maintenance lock.
 * Accesses go through the segment, bounds- and liveness-checked, so use after {@link #free()}
 * throws {@link IllegalStateException}.
 */
public final class FrequencySketch {
    /** Bytes per block: one cache line, 8 longs of 16 counters. */
    static final int BLOCK_BYTES = 64;
    /**
     * The table's bytes per entry of capacity: 6 counters. 4 (8 counters, until 2026-11-27) kept
     * 0.05 points more of hit rate over the simulator's traces and synthetic workloads, 2 lost
     * 0.16 (docs/sketch-ceiling.md). The byte is worth more as entries: at 32-byte values it
     * is 1.6% of an entry, and 1.6% more entries gain more hits than that on most traces.
     */
    public static final long BYTES_PER_ENTRY = 3;

    /** The largest table: 1 GiB, 2^31 counters; enough for ~358 million entries at 3 bytes each. */
    public static final long MAX_BYTES = 1L << 30;

    /**
     * The smallest table: below 1,366 entries, 3 bytes per entry are too few counters to rank
     * keys (a 20-entry cache would get one block, where every key collides with every other:
     * the cpp trace at 20 entries measured 1.7% hits with it, 18% with this floor).
     */
    static final long MIN_BYTES = 4096;

    private static final long ONE_BITS_CLEARED = 0x7777_7777_7777_7777L;
    private static final int MIN_SAMPLE_CAPACITY = 16;

    private final NativeMemory.Block block;
    private final MemorySegment table;
    private final long blocks;
    private final long sampleSize;
    /**
     * Additions since the last aging, written at every increment: on a line of its own, off the
     * fields ({@link #table}, {@link #blocks}) that every thread's {@link #touch} reads.
     */
    private final OwnLineLongs additions = new OwnLineLongs(1);

    /**
     * A sketch for a cache of {@code capacity} entries, {@link #bytesFor(long)} bytes of native
     * memory aligned to a cache line.
     */
    public FrequencySketch(long capacity) {
        this(capacity, bytesFor(capacity));
    }

    /**
     * A sketch of {@code bytes} bytes (whole 64-byte blocks, at most {@link #MAX_BYTES}) whose
     * aging period is still that of a cache of {@code capacity} entries. For measuring what a
     * table other than {@link #bytesFor(long)} costs, e.g. the ceiling's 1.07 bytes per entry at
     * a billion entries; the cache itself uses the one-argument constructor's size.
     */
    public FrequencySketch(long capacity, long bytes) {
        this(capacity, bytes, false);
    }

    /**
     * {@link #FrequencySketch(long, long)}, its table mapped and advised for huge pages if {@code
     * adviseHugePages} and it is a huge page or more ({@link NativeMemory#allocate(long, boolean)}).
     */
    public FrequencySketch(long capacity, long bytes, boolean adviseHugePages) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative: " + capacity);
        }
        if (bytes < BLOCK_BYTES || bytes > MAX_BYTES || bytes % BLOCK_BYTES != 0) {
            throw new IllegalArgumentException("bytes must be whole 64-byte blocks, 64 to " + MAX_BYTES + ": " + bytes);
        }
        this.sampleSize = 10 * Math.min(Math.max(capacity, MIN_SAMPLE_CAPACITY), Long.MAX_VALUE / 10);
        this.block = adviseHugePages && bytes >= NativeMemory.HUGE_PAGE
                ? NativeMemory.allocate(bytes, true) // at a huge-page boundary: cache-line aligned
                : NativeMemory.allocate(bytes, BLOCK_BYTES);
        this.table = block.segment();
        this.blocks = bytes / BLOCK_BYTES;
    }

    /**
     * The table size for {@code capacity} entries: {@link #BYTES_PER_ENTRY} bytes per entry
     * rounded down to whole 64-byte blocks (any number of blocks: a key's block is picked by
     * multiplying, not masking, so no power-of-two rounding halves the table); at least {@link
     * #MIN_BYTES} and at most {@link #MAX_BYTES} (1 GiB). Above ~358 million entries the ceiling
     * gives less than 3 bytes per entry, and the estimates get coarser.
     */
    public static long bytesFor(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative: " + capacity);
        }
        long wanted = capacity >= MAX_BYTES / BYTES_PER_ENTRY ? MAX_BYTES : BYTES_PER_ENTRY * capacity;
        return Math.max(MIN_BYTES, wanted / BLOCK_BYTES * BLOCK_BYTES);
    }

    /** Bytes in the counter table. */
    public long byteSize() {
        return table.byteSize();
    }

    /** Additions between two agings: 10 × the capacity given to the constructor, at least 160. */
    public long sampleSize() {
        return sampleSize;
    }

    /** Returns the native memory. Idempotent; any use afterwards throws IllegalStateException. */
    public void free() {
        block.free();
    }

    /**
     * Counts one more occurrence of the key with this hash, by conservative update: adds one only
     * to those of its 4 counters that hold its estimate (their minimum), unless that is 15. The
     * counters above the minimum were raised by other keys sharing them; raising them too would
     * only add to those keys' overestimates. Ages the sketch when the additions reach
     * {@link #sampleSize()}.
     */
    public void increment(long hash) {
        incrementAndEstimate(hash);
    }

    /** {@link #increment}, returning the key's estimate after it ({@link #frequency}). */
    public int incrementAndEstimate(long hash) {
        long h = mix(hash);
        long base = Math.unsignedMultiplyHigh(h, blocks) * BLOCK_BYTES;
        int select = (int) h; // low bits: the block is picked by the high ones
        int min = estimate(base, select);
        if (min == 0xF) {
            return min; // saturated: not an addition
        }
        // Each word read again and written back, raised where its counter holds the minimum,
        // without a branch: which counters do is a coin flip for a branch predictor, and a branch
        // per counter made an increment on mid-range counters twice as slow (31 against 14 ns at
        // 10K-100K entries, FrequencySketchBenchmark; docs/speed-work.md, sixteenth session). The
        // four are different words of one line (see wordOffset), so a word read here is the one
        // the estimate read. Reading them again costs four loads from L1; keeping the four words,
        // offsets and shifts of the estimate for the writes cost C2 ~25 instructions more in spills
        // (docs/speed-work.md, fifty-fourth session).
        for (int i = 0, sel = select; i < 4; i++, sel >>>= 5) {
            long offset = base + wordOffset(i, sel);
            long word = table.get(NativeMemory.PLAIN_LONG, offset);
            int shift = (sel & 0xF) << 2;
            long raise = ((word >>> shift) & 0xF) == min ? 1L : 0L;
            table.set(NativeMemory.PLAIN_LONG, offset, word + (raise << shift));
        }
        if (additions.add(0, 1) >= sampleSize) {
            age();
            return frequency(hash);
        }
        return min + 1;
    }

    /**
     * The estimated count of the key with this hash, 0 to 15: the least of its 4 counters. Until
     * the first aging it is never below the true count (capped at 15); collisions only add.
     */
    public int frequency(long hash) {
        long h = mix(hash);
        long base = Math.unsignedMultiplyHigh(h, blocks) * BLOCK_BYTES;
        return estimate(base, (int) h); // low bits: the block is picked by the high ones
    }

    /** The smallest of the 4 counters that {@code select} picks in the block at {@code base}. */
    private int estimate(long base, int select) {
        int min = 0xF;
        for (int i = 0; i < 4; i++, select >>>= 5) {
            long word = table.get(NativeMemory.PLAIN_LONG, base + wordOffset(i, select));
            min = Math.min(min, (int) (word >>> ((select & 0xF) << 2)) & 0xF);
        }
        return min;
    }

    /**
     * Loads the cache line of the key's counters and returns its first word. A thread that is
     * about to record an access calls this while it still has other misses to wait for, so that
     * the line is in its core's cache when the drain's {@link #increment} comes (at 10M entries
     * that increment was a miss of ~330 ns a GET; docs/speed-work.md, nineteenth session). Any
     * thread, without the maintenance lock: it only reads, and the word itself means nothing to
     * the caller.
     */
    public long touch(long hash) {
        return table.get(NativeMemory.PLAIN_LONG, blockOf(hash) * BLOCK_BYTES);
    }

    /** The block the key with this hash counts in. */
    public long blockOf(long hash) {
        return Math.unsignedMultiplyHigh(mix(hash), blocks);
    }

    /** Additions since the last aging (halved by it). */
    long additions() {
        return additions.get(0);
    }

    /** The counter table, for tests of the layout. */
    MemorySegment table() {
        return table;
    }

    /**
     * Halves every counter: a shift of each long, with the bit that crossed into the nibble
     * below cleared. The additions are halved too, so the next aging comes after about half a
     * sample of new additions, as the counters kept about half their weight.
     */
    private void age() {
        long size = table.byteSize();
        for (long offset = 0; offset < size; offset += Long.BYTES) {
            long word = table.get(NativeMemory.PLAIN_LONG, offset);
            table.set(NativeMemory.PLAIN_LONG, offset, (word >>> 1) & ONE_BITS_CLEARED);
        }
        additions.set(0, additions.get(0) >>> 1);
    }

    /**
     * Byte offset in the block of the long holding counter {@code i}: long 2i or 2i + 1, chosen
     * by bit 4 of the counter's 5-bit selector (bits 0-3 pick the nibble).
     */
    private static long wordOffset(int i, int select) {
        return (long) ((i << 1) | ((select >>> 4) & 1)) * Long.BYTES;
    }

    /**
     * Re-mixes the key hash (a splitmix64 finalizer over the hash plus an odd constant), so
     * sketch positions do not follow the bits the index uses for shard, slot and tag.
     */
    static long mix(long hash) {
        long z = hash + 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
