package dev.larder.internal.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Epoch-based protection of native memory from reuse while readers may still be looking at it.
 *
 * <p>A reader {@link #enter() enters} before it follows an index word and {@link #exit exits}
 * when it is done with the bytes. Entering adds one to a counter of its stripe for the current
 * epoch's parity; stripes are chosen by thread id and padded to their own cache lines, so
 * readers on different stripes never write the same line and no reader ever blocks. Memory
 * that was unlinked (no index word leads to it any more) may be reused after {@link
 * #synchronize()} returns: it flips the epoch and waits until every reader that entered under
 * the old parity has left. Readers that enter after the flip can no longer reach the unlinked
 * memory, because the unlinking happened before the flip.
 *
 * <p>This is a two-parity read indicator, as in RCU and left-right; one {@code synchronize}
 * runs at a time (the caller holds the maintenance lock).
 */
public final class ReaderEpochs {
    private static final VarHandle COUNTERS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle EPOCH = FieldHandles.of(MethodHandles.lookup(), "epoch", long.class);

    /** Longs per stripe: 128 bytes, two cache lines, against adjacent-line prefetch. */
    private static final int STRIDE = 16;

    /**
     * In the front padding, a line from the array's header and from the first stripe: 1 once any
     * reader has entered, for good. Until then {@link #idle} reads it alone instead of every
     * stripe's counters (a cache read only optimistically never enters: its in-place rewrites
     * asked 16 counters on 8 lines each time: one thread's overwrites at 10K ~12% faster without).
     */
    private static final int ENTERED = STRIDE / 2;

    private final long[] counters;
    private final int stripeMask;

    @SuppressWarnings("unused") // accessed through EPOCH
    private volatile long epoch;

    public ReaderEpochs(int stripes) {
        int n = Integer.highestOneBit(Math.max(1, stripes - 1) << 1);
        this.stripeMask = n - 1;
        this.counters = new long[(n + 1) * STRIDE]; // one stride of padding in front
    }

    /** Marks the calling thread as reading; returns the token to pass to {@link #exit}. */
    public int enter() {
        return enter((int) Thread.currentThread().threadId());
    }

    /**
     * {@link #enter} on the stripe of {@code thread}, the caller's thread index (numbers handed
     * out in turn put the first threads on stripes of their own; thread ids need not).
     */
    public int enter(int thread) {
        if ((long) COUNTERS.getVolatile(counters, ENTERED) == 0) {
            COUNTERS.setVolatile(counters, ENTERED, 1L); // before the counter's add: see idle()
        }
        int base = ((thread & stripeMask) + 1) * STRIDE;
        for (; ; ) {
            long e = (long) EPOCH.getVolatile(this);
            int index = base + (int) (e & 1);
            COUNTERS.getAndAdd(counters, index, 1L);
            if ((long) EPOCH.getVolatile(this) == e) {
                return index;
            }
            COUNTERS.getAndAdd(counters, index, -1L);
        }
    }

    /** Marks the end of the read that {@link #enter} returned {@code token} for. */
    public void exit(int token) {
        COUNTERS.getAndAddRelease(counters, token, -1L);
    }

    /**
     * Waits until every reader that entered before this call has exited. Memory unlinked before
     * the call can be reused once it returns.
     */
    public void synchronize() {
        long e = (long) EPOCH.getVolatile(this);
        EPOCH.setVolatile(this, e + 1);
        // No reader has ever entered: one that enters from now on sets the flag first and then
        // reads the flipped epoch (volatile accesses: one total order), so it counts under the
        // new parity and cannot reach what was unlinked. The stripes' lines are not read then.
        if ((long) COUNTERS.getVolatile(counters, ENTERED) == 0) {
            return;
        }
        int parity = (int) (e & 1);
        int spins = 0;
        while (activeReaders(parity) != 0) {
            if (++spins < 64) {
                Thread.onSpinWait();
            } else if (spins < 256) {
                Thread.yield();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
            }
        }
    }

    /**
     * Whether no reader is inside right now, under either parity. A writer that published a flag
     * with a full fence before calling this (Dekker's handshake: see {@code
     * IndexShard.beginChangeFenced}) knows that a reader counted after this returns true has
     * entered after the flag was visible, so it will see the flag.
     */
    public boolean idle() {
        // A reader writes ENTERED (or reads it set, after whoever set it), then adds to its
        // counter, then reads the shard's seq; the writer publishes the seq, then reads ENTERED.
        // All are volatile, so one total order: if this reads 0, the reader's add and its read of
        // the seq come after the seq was published, and the reader sees it.
        if ((long) COUNTERS.getVolatile(counters, ENTERED) == 0) {
            return true;
        }
        for (int s = 0; s <= stripeMask; s++) {
            int base = (s + 1) * STRIDE;
            if ((long) COUNTERS.getVolatile(counters, base) != 0
                    || (long) COUNTERS.getVolatile(counters, base + 1) != 0) {
                return false;
            }
        }
        return true;
    }

    private long activeReaders(int parity) {
        long sum = 0;
        for (int s = 0; s <= stripeMask; s++) {
            sum += (long) COUNTERS.getVolatile(counters, (s + 1) * STRIDE + parity);
        }
        return sum;
    }
}
