package dev.larder.internal.memory;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Values too big for a page live here, each in its own native extent, so a multi-megabyte
 * value never fragments the pages of small records and its memory goes back to the OS as soon
 * as it is reclaimed. The record in the log holds the extent's id. Extents freed by writers and
 * the evictor are retired first and freed after a reader grace period.
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
    private int retiredCount;
    private long bytes;
    private boolean closed;

    public LargeValueStore(MemoryBudget budget) {
        this.budget = budget;
    }

    /** Allocates an extent of {@code length} bytes; returns its id, or -1 if the budget is full. */
    public synchronized long allocate(long length) {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
        long size = Math.max(8, length);
        if (!budget.tryReserve(size)) {
            return -1;
        }
        NativeMemory.Block block;
        try {
            block = NativeMemory.allocate(size);
        } catch (RuntimeException | OutOfMemoryError e) {
            budget.release(size);
            throw e;
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
        bytes += size;
        return id;
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
    public synchronized boolean hasRetired() {
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

    /** Frees an extent now. The caller guarantees no reader can still reach it. */
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
        block.free();
        budget.release(length);
    }

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
        retiredCount = 0;
        bytes = 0;
    }
}
