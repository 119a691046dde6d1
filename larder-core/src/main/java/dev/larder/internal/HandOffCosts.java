package dev.larder.internal;

/**
 * Whether a writer past the entry bound, finding no maintenance task scheduled or lingering,
 * wakes the executor's thread for the eviction batches or evicts the batch itself: it wakes it
 * while a wake costs it less than the batches the woken task then runs would have. A wake is the
 * caller's side of handing a task to a parked thread, a batch its eviction; a woken task lingers
 * for the next batches ({@code NativeCache.maintain}) and runs up to 64 while they come more often
 * than its linger. All three are measured as they happen (moving averages of the last few).
 *
 * <p>Why: while the JIT compiled the first seconds' code, one thread's inserts at 10K entries in a
 * fresh JVM came slower than a batch per linger, and its wakes took ~75 µs each (the woken thread
 * ran on the writer's core while the compiler had the other): the writer spent 32% of its first
 * 3 s waking the executor for one or two batches a time, each a few µs of eviction
 * (docs/speed-work.md, forty-fifth session). A caller that does other work between its puts
 * meets the same: a wake per batch.
 *
 * <p>A writer that declines a wake still wakes once per {@link #PROBE_EVERY} declines, so that the
 * figures follow a machine and a workload that change (the JIT done, the writer faster). Written
 * by the maintenance pass under its lock ({@link #batchRan}), by the task ({@link #taskEnded}) and
 * by the writer whose schedule won ({@link #woke}; the two tasks a fork-join pool may hold and
 * two overlapping wakes can race, which loses a sample, not a figure); read by any writer at the
 * bound, without ordering: a stale figure only delays a switch.
 */
final class HandOffCosts {
    /**
     * How long the maintenance task waits on the executor's thread for the next batch (see {@code
     * NativeCache.maintain}): about what a park and its wake-up cost on a 2-core virtual machine.
     */
    static final long LINGER_NANOS = 50_000;

    /** A writer that declined this many wakes in a row wakes the executor anyway (a power of two). */
    static final int PROBE_EVERY = 256;

    /** Each new sample weighs 1/8 in the moving averages. */
    private static final int AVERAGE_SHIFT = 3;

    /** The batches per task are kept in sixteenths. */
    private static final int BATCH_SCALE = 16;

    // -1 until measured once
    private volatile long batchNanos = -1;
    private volatile long wakeNanos = -1;
    private volatile long batchesPerTask = -1; // in sixteenths

    /** Wakes declined since the last one (racy: a lost count only moves a probe). */
    private int declined;

    /** A batch for writers past the bound took {@code nanos} (under the maintenance lock). */
    void batchRan(long nanos) {
        batchNanos = average(batchNanos, nanos);
    }

    /** Handing a task to the executor took its caller {@code nanos}. */
    void woke(long nanos) {
        wakeNanos = average(wakeNanos, nanos);
    }

    /** A task woken for writers past the bound ran {@code batches} batches before it ended. */
    void taskEnded(int batches) {
        batchesPerTask = average(batchesPerTask, (long) batches * BATCH_SCALE);
    }

    /**
     * Whether a writer past the bound, with no task scheduled, should wake the executor rather
     * than evict the batch itself: the wake costs less than the batches a woken task runs, or a
     * figure is not measured yet, or this is a probe.
     */
    boolean wakePays() {
        long batch = batchNanos;
        long wake = wakeNanos;
        long batches = batchesPerTask;
        if (batch < 0 || wake < 0 || batches < 0 || wake * BATCH_SCALE < batch * batches) {
            return true;
        }
        return (++declined & (PROBE_EVERY - 1)) == 0;
    }

    private static long average(long average, long sample) {
        return average < 0 ? sample : average + ((sample - average) >> AVERAGE_SHIFT);
    }
}
