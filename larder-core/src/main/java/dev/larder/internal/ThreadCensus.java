package dev.larder.internal;

import dev.larder.internal.concurrent.OwnLineLongs;

/**
 * Whether the executor's thread has a core of its own to evict on: the threads that used the
 * cache lately, counted against the cores. A writer past the entry bound, and a reader every
 * {@link #READS_PER_SIGHTING} hits of its stripe, sets its thread's bit (its {@link
 * KeyScratch#threadIndex} modulo 64); every {@link #COUNT_EVERY_NANOS} the maintenance pass counts
 * the bits and clears them.
 *
 * <p>Why: one writer that hands its eviction batches to the executor inserts while the other
 * core evicts (one thread's inserts at 1M entries took ~0.5 of the time), but as many threads as
 * cores leave the executor no core: it takes turns with them, and a writer at the hard limit
 * waits for an evictor that is not running (two threads' inserts at 1M took ~1.15 of the time),
 * or a reader loses its core's time to it (docs/speed-work.md, forty-first and forty-second
 * sessions).
 */
final class ThreadCensus {
    /** How often the pass counts the threads: ~1,000 inserts of each at the sizes measured. */
    static final long COUNT_EVERY_NANOS = 1_000_000;

    /**
     * A reader is seen once per this many hits counted on its stripe (a power of two): tens of
     * µs apart at the rates measured, so a reader is seen in every count, and the hit path pays
     * a test of a count it has already.
     */
    static final long READS_PER_SIGHTING = 256;

    /** Bit i: a thread whose index is i modulo 64 was seen since the last count. */
    private final OwnLineLongs seen = new OwnLineLongs(1);

    private final int cores;
    /** When the threads were last counted (the maintenance pass's own: under its lock). */
    private long countedAt;

    private volatile boolean spareCore;

    /** For a machine of {@code cores} cores, at time {@code now} ({@link System#nanoTime}, which may be negative). */
    ThreadCensus(int cores, long now) {
        this.cores = cores;
        this.countedAt = now;
        this.spareCore = cores > 1;
    }

    /**
     * A thread using the cache: its bit, set only if it is not (a locked instruction per thread
     * per count, not per call). A bit the count clears just after it was set is set again by
     * that thread's next sighting.
     */
    void saw(int threadIndex) {
        long bit = 1L << threadIndex; // the shift takes the index modulo 64
        if ((seen.getAcquire(0) & bit) == 0) {
            seen.setBits(0, bit);
        }
    }

    /** A reader's hit, the {@code counted}-th of its stripe: seen once per {@link #READS_PER_SIGHTING}. */
    void read(int threadIndex, long counted) {
        if ((counted & (READS_PER_SIGHTING - 1)) == 0) {
            saw(threadIndex);
        }
    }

    /** Whether a writer past the bound may leave the batch to the executor. */
    boolean spareCore() {
        return spareCore;
    }

    /** The executor refused a task: no hand-offs until the next count. */
    void executorRefused() {
        if (spareCore) {
            spareCore = false;
        }
    }

    /** Counts the threads if the last count is old enough; the maintenance pass, under its lock. */
    void count(long now) {
        if (now - countedAt < COUNT_EVERY_NANOS) {
            return;
        }
        countedAt = now;
        boolean spare = cores > 1 && Long.bitCount(seen.getAcquire(0)) < cores;
        seen.setRelease(0, 0);
        if (spare != spareCore) {
            spareCore = spare; // written when it changes only: every writer past the bound reads it
        }
    }
}
