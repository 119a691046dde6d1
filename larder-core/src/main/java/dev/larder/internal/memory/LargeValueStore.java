package dev.larder.internal.memory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * Values too big for a page live here, each in its own native extent, so a multi-megabyte
 * value never fragments the pages of small records. The record in the log holds the extent's
 * id. Extents freed by writers and the evictor are retired first and freed after a reader grace
 * period.
 *
 * <p>A freed extent is kept for the next value of its size rather than returned to the OS, up
 * to an eighth of the budget ({@link #pooledBytes}): freeing one closes its shared arena, a
 * thread handshake (~20 µs here), and an overwrite of a 16 KiB value cost 69 µs against OHC's
 * 1.8 µs when every overwrite freed one (docs/speed-work.md, twenty-third session), as pages are
 * recycled rather than freed for the same reason. Kept extents stay reserved in the budget; they
 * are freed when a reservation would fail ({@link #releasePooled}), so they never cost an entry.
 * With a pool, extents are made in size classes (sixteen per power of two), so that a value gets
 * the kept extent of its class: at most a sixteenth more than it needs.
 *
 * <p>One heap reference per large value: they are few by definition (each is at least an
 * eighth of a page), so this stays a small part of the heap.
 */
public final class LargeValueStore {
    private static final long[] NONE = new long[0];
    private final MemoryBudget budget;
    private volatile NativeMemory.Block[] extents = new NativeMemory.Block[16];
    private int[] freeIds = new int[16];
    private int freeCount;
    private int nextId;
    private long[] retired = new long[16];
    /** Written under the lock; read without it by {@link #hasRetired}, once per eviction. */
    private volatile int retiredCount;

    /** Written under the lock; read without it too ({@link #heldBytes}). */
    private volatile long bytes;

    private boolean closed;

    /** Freed extents kept for reuse, by size class ({@link #ceilClass}); created when needed. */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<NativeMemory.Block>[] pooled = new ArrayDeque[64 * CLASSES_PER_DOUBLING];

    private volatile long pooledBytes;
    /** Extents made (each an arena: one whose kept extent is reused makes none). */
    private long made;

    private final long poolLimit;

    public LargeValueStore(MemoryBudget budget) {
        this(budget, budget.maximum() / 8);
    }

    /** A store that keeps at most {@code poolLimit} bytes of freed extents for reuse. */
    public LargeValueStore(MemoryBudget budget, long poolLimit) {
        this.budget = budget;
        this.poolLimit = Math.max(0, poolLimit);
    }

    /** Allocates an extent of {@code length} bytes; returns its id, or -1 if the budget is full. */
    public synchronized long allocate(long length) {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
        long size = extentBytes(length);
        NativeMemory.Block block = takePooled(size);
        if (block == null) {
            if (!budget.tryReserve(size)) {
                releasePooled(size);
                if (!budget.tryReserve(size)) {
                    return -1;
                }
            }
            try {
                block = NativeMemory.allocate(size);
            } catch (RuntimeException | OutOfMemoryError e) {
                budget.release(size);
                throw e;
            }
            made++;
        }
        int id;
        if (freeCount > 0) {
            id = freeIds[--freeCount];
        } else {
            id = nextId++;
            if (id >= extents.length) {
                extents = Arrays.copyOf(extents, extents.length * 2);
            }
        }
        extents[id] = block;
        bytes += block.segment().byteSize();
        return id;
    }

    /**
     * The bytes of budget an extent for a value of {@code length} bytes takes: its size class's
     * with a pool, else the length itself (at least 8).
     */
    public long extentBytes(long length) {
        return poolLimit > 0 ? classExtentBytes(length) : Math.max(8, length);
    }

    /** The bytes an extent for a value of {@code length} bytes takes in a store with a pool. */
    public static long classExtentBytes(long length) {
        return classSize(ceilClass(length));
    }

    /** A kept extent of exactly {@code size} bytes (a class's size), or null. */
    private NativeMemory.Block takePooled(long size) {
        ArrayDeque<NativeMemory.Block> kept = keptOfClass(size);
        if (kept == null) {
            return null;
        }
        NativeMemory.Block block = kept.pop();
        pooledBytes -= block.segment().byteSize();
        return block;
    }

    /**
     * Frees kept extents, largest classes first, until {@code needed} bytes of the budget are
     * available or none is kept: for a reservation (pages, index growth, a value) that would fail.
     */
    public synchronized void releasePooled(long needed) {
        for (int c = pooled.length - 1; c >= 0 && pooledBytes > 0 && budget.available() < needed; c--) {
            ArrayDeque<NativeMemory.Block> kept = pooled[c];
            while (kept != null && !kept.isEmpty() && budget.available() < needed) {
                NativeMemory.Block block = kept.pop();
                long length = block.segment().byteSize();
                pooledBytes -= length;
                block.free();
                budget.release(length);
            }
        }
    }

    /** Whether an extent of {@code size} bytes (a class's size) is kept for reuse. */
    public synchronized boolean hasPooled(long size) {
        return keptOfClass(size) != null;
    }

    /** The kept extents of {@code size}'s class, or null if there are none. */
    private ArrayDeque<NativeMemory.Block> keptOfClass(long size) {
        ArrayDeque<NativeMemory.Block> kept = pooled[ceilClass(size)];
        return kept == null || kept.isEmpty() ? null : kept;
    }

    /** How many extents were made, not taken from those kept for reuse. */
    public synchronized long extentsMade() {
        return made;
    }

    /**
     * The budget extents hold, those holding values and those kept for reuse, read without the
     * lock (for the evictor's page watermark: an approximation is enough).
     */
    public long heldBytes() {
        return bytes + pooledBytes;
    }

    /** Bytes of freed extents kept for reuse (reserved in the budget). */
    public synchronized long pooledBytes() {
        return pooledBytes;
    }

    static final int CLASSES_PER_DOUBLING = 16;

    /** The smallest class whose size is at least {@code length} (sizes from 16 bytes). */
    static int ceilClass(long length) {
        long size = Math.max(16, length);
        int log = 63 - Long.numberOfLeadingZeros(size);
        int c = log * CLASSES_PER_DOUBLING + (int) ((size >>> (log - 4)) & (CLASSES_PER_DOUBLING - 1));
        return classSize(c) < size ? c + 1 : c;
    }

    /** The size of class {@code c}: sixteen evenly spaced sizes per power of two. */
    static long classSize(int c) {
        int log = c / CLASSES_PER_DOUBLING;
        return ((long) CLASSES_PER_DOUBLING + c % CLASSES_PER_DOUBLING) << (log - 4);
    }

    /** The extent's memory, exactly {@code length} bytes long. */
    public MemorySegment segment(long id, long length) {
        return extents[(int) id].segment().asSlice(0, length);
    }

    /** The extent's whole segment (at least the value's length). */
    public MemorySegment segment(long id) {
        return extents[(int) id].segment();
    }

    /** Frees the extent after the next grace period. */
    public synchronized void retire(long id) {
        if (retiredCount == retired.length) {
            retired = Arrays.copyOf(retired, retired.length * 2);
        }
        retired[retiredCount++] = id;
    }

    /** Whether extents wait for a grace period. */
    public boolean hasRetired() {
        return retiredCount > 0;
    }

    /**
     * Takes the ids retired so far; the caller frees them with {@link #free} after a grace
     * period.
     */
    public synchronized long[] takeRetired() {
        if (retiredCount == 0) {
            return NONE;
        }
        long[] out = Arrays.copyOf(retired, retiredCount);
        retiredCount = 0;
        return out;
    }

    /**
     * Frees an extent now, or keeps it for the next value of its size while the kept extents stay
     * under the pool's limit. The caller guarantees no reader can still reach it.
     */
    public synchronized void free(long id) {
        NativeMemory.Block block = extents[(int) id];
        if (closed || block == null) {
            return;
        }
        long length = block.segment().byteSize();
        extents[(int) id] = null;
        freeIds = freeCount == freeIds.length ? Arrays.copyOf(freeIds, freeIds.length * 2) : freeIds;
        freeIds[freeCount++] = (int) id;
        bytes -= length;
        if (pooledBytes + length <= poolLimit) {
            int c = ceilClass(length); // a class's size: made by allocate with a pool
            ArrayDeque<NativeMemory.Block> kept = pooled[c];
            if (kept == null) {
                kept = pooled[c] = new ArrayDeque<>();
            }
            kept.push(block);
            pooledBytes += length;
            return;
        }
        block.free();
        budget.release(length);
    }

    /** Bytes of the extents that hold values (not those kept for reuse). */
    public synchronized long bytes() {
        return bytes;
    }

    /** Frees everything; the cache is closing. */
    public synchronized void freeAll() {
        closed = true;
        NativeMemory.Block[] all = extents;
        for (int i = 0; i < nextId; i++) {
            if (all[i] != null) {
                long length = all[i].segment().byteSize();
                all[i].free();
                budget.release(length); // the blocks stay referenced: late readers throw, never crash
            }
        }
        releasePooled(Long.MAX_VALUE);
        retiredCount = 0;
        bytes = 0;
    }
}
