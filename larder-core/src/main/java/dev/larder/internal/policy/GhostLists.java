package dev.larder.internal.policy;

import dev.larder.internal.concurrent.OwnLineLongs;
import dev.larder.internal.memory.NativeMemory;
import java.lang.foreign.MemorySegment;

/**
 * The keys evicted last on each side of W-TinyLFU's split, remembered by hash only (the ghost
 * lists of ARC, sampled), so that the hill climber can tell, within one sample period, which side
 * would have turned more misses into hits had it been one step larger. The climber consults them
 * only when the workload jumped, and only a lead of main's ghosts moves it (see {@link
 * HillClimber}).
 *
 * <ul>
 *   <li>Window side: records evicted from the window (candidates that lost their duel). A window
 *       larger by {@link #horizon()} entries would have kept each of them for that many more
 *       departures from the window.
 *   <li>Main side: records evicted from main (victims). A main larger by the horizon would have
 *       kept each of them for that many more evictions from main.
 * </ul>
 *
 * An insert of a key whose ghost is still within the horizon counts one ghost hit for its side,
 * and the ghost is forgotten (the cache reports every write except those that found their key
 * present, which has no ghost). Both counts come from the same requests of the same period, so a
 * workload whose hit rate swings from period to period moves both alike; comparing one period's
 * hit rate with the previous one's cannot tell those swings from the window's doing.
 *
 * <p>Layout: one native block of two direct-mapped tables of 64-bit slots, window side first. A
 * slot holds the key's 32-bit tag (high half, never 0) and its side's departure count when it
 * was evicted, modulo 2^32 (low half). A key that maps to an occupied slot replaces the ghost
 * there: a ghost lost that way is lost on either side alike. Only keys whose re-mixed hash falls
 * in a sample of 1 in 2^k are remembered, k the least that keeps at most {@value #MAX_TRACKED}
 * ghosts per side within the horizon, so the tables stay small at any cache size (at most 4 KiB
 * together); both sides sample the same keys, so their counts stay comparable.
 *
 * <p>Not thread-safe: only the cache's maintenance thread uses it, under the maintenance lock.
 */
public final class GhostLists {
    /**
     * Most ghosts per side within the horizon: more keys are sampled out. Every insert of a
     * tracked key is recorded by its writer and looked up by the drain, so the sample is what
     * the lists cost a cache that inserts: 2,048 until 2026-12-02, which tracked every key of a
     * cache below 32K entries; 128 took ~180 of ~3,350 instructions off an insert at 10K entries,
     * and no row of the simulator moved by more than its spread between runs
     * (docs/speed-work.md, forty-seventh session).
     */
    static final int MAX_TRACKED = 128;
    /** Slots per tracked ghost: few enough collisions that most ghosts live out their horizon. */
    private static final int SLOTS_PER_GHOST = 2;
    /** Fewest slots per side. */
    private static final int MIN_SLOTS = 16;
    /** A horizon longer than this would not fit the 32-bit stamps' arithmetic. */
    private static final long MAX_HORIZON = 1L << 30;

    private static final long STAMP_MASK = 0xFFFF_FFFFL;

    private final NativeMemory.Block block;
    private final MemorySegment table;
    private final long horizon;
    private final long sampleMask;
    private final int slotMask;
    /** Byte offset of the main side's table. */
    private final long mainBase;

    /**
     * Departures of the window and evictions from main (each side's clock), and each side's ghost
     * hits: written at every eviction, so on a line of their own, off {@link #sampleMask}, which
     * every insert reads ({@link #tracks}).
     */
    private final OwnLineLongs counts = new OwnLineLongs(4);

    private static final int WINDOW_DEPARTURES = 0;
    private static final int MAIN_EVICTIONS = 1;
    private static final int WINDOW_HITS = 2;
    private static final int MAIN_HITS = 3;

    /** Ghost lists remembering each evicted key for {@code horizon} departures of its side. */
    public GhostLists(long horizon) {
        if (horizon < 1) {
            throw new IllegalArgumentException("horizon must be positive: " + horizon);
        }
        this.horizon = Math.min(horizon, MAX_HORIZON);
        int shift = sampleShift(this.horizon);
        this.sampleMask = (1L << shift) - 1;
        int slots = slotsPerSide(this.horizon);
        this.slotMask = slots - 1;
        this.mainBase = (long) slots * Long.BYTES;
        this.block = NativeMemory.allocate(2 * mainBase);
        this.table = block.segment();
    }

    /** Native bytes of the lists for a horizon of {@code horizon} departures. */
    public static long bytesFor(long horizon) {
        return 2L * slotsPerSide(Math.clamp(horizon, 1, MAX_HORIZON)) * Long.BYTES;
    }

    private static int sampleShift(long horizon) {
        int shift = 0;
        while ((horizon >> shift) > MAX_TRACKED) {
            shift++;
        }
        return shift;
    }

    private static int slotsPerSide(long horizon) {
        long tracked = Math.max(1, horizon >> sampleShift(horizon));
        long wanted = Math.max(MIN_SLOTS, SLOTS_PER_GHOST * tracked);
        return (int) Long.highestOneBit(wanted - 1) << 1;
    }

    /** Departures of a side that a ghost outlives: the extra entries the side is imagined with. */
    public long horizon() {
        return horizon;
    }

    /** A record left the window: evicted (it becomes a ghost) or moved to main. */
    public void windowDeparture(long hash, boolean evicted) {
        long departures = counts.add(WINDOW_DEPARTURES, 1);
        if (evicted) {
            remember(0, hash, departures);
        }
    }

    /** {@code n} records left the window for main together (a page moved whole). */
    public void windowDepartures(long n) {
        counts.add(WINDOW_DEPARTURES, n);
    }

    /** A record was evicted from main: it becomes a ghost. */
    public void mainEviction(long hash) {
        remember(mainBase, hash, counts.add(MAIN_EVICTIONS, 1));
    }

    /**
     * Whether the lists look for or remember the key with this hash: only a sample of keys is
     * tracked. Any thread, no lock: it reads nothing that changes.
     */
    public boolean tracks(long hash) {
        return sampled(mix(hash));
    }

    private boolean sampled(long mixed) {
        return (mixed & sampleMask) == 0;
    }

    /** A key was inserted: if it is a ghost still within the horizon, its side counts a hit. */
    public void inserted(long hash) {
        long h = mix(hash);
        if (!sampled(h)) {
            return;
        }
        if (forget(0, h, counts.get(WINDOW_DEPARTURES))) {
            counts.add(WINDOW_HITS, 1);
        }
        if (forget(mainBase, h, counts.get(MAIN_EVICTIONS))) {
            counts.add(MAIN_HITS, 1);
        }
    }

    /** Ghost hits of the window side so far (cumulative). */
    public long windowHits() {
        return counts.get(WINDOW_HITS);
    }

    /** Ghost hits of the main side so far (cumulative). */
    public long mainHits() {
        return counts.get(MAIN_HITS);
    }

    /** Bytes of native memory held. */
    public long byteSize() {
        return table.byteSize();
    }

    /** Returns the native memory. Idempotent; any use afterwards throws IllegalStateException. */
    public void free() {
        block.free();
    }

    private void remember(long base, long hash, long departures) {
        long h = mix(hash);
        if (!sampled(h)) {
            return;
        }
        table.set(NativeMemory.PLAIN_LONG, slot(base, h), (tag(h) << 32) | (departures & STAMP_MASK));
    }

    /** Clears the key's ghost on the side at {@code base}; returns whether it was within the horizon. */
    private boolean forget(long base, long h, long departures) {
        long offset = slot(base, h);
        long ghost = table.get(NativeMemory.PLAIN_LONG, offset);
        if (ghost >>> 32 != tag(h)) {
            return false;
        }
        table.set(NativeMemory.PLAIN_LONG, offset, 0L);
        long age = (departures - ghost) & STAMP_MASK;
        return age <= horizon;
    }

    private long slot(long base, long h) {
        return base + (((int) (h >>> 20)) & slotMask) * (long) Long.BYTES;
    }

    /** The key's tag: 32 bits of its re-mixed hash, never 0 (an empty slot). */
    private static long tag(long h) {
        return (h >>> 32) | 1;
    }

    /** A re-mix of the key hash, unrelated to the bits the index and the sketch use. */
    private static long mix(long hash) {
        return FrequencySketch.mix(hash ^ 0x2545_F491_4F6C_DD1DL);
    }
}
