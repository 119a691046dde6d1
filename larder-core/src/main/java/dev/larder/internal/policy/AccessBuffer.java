package dev.larder.internal.policy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

/**
 * Where readers and writers record the keys they accessed (a 64-bit hash, and a reference to the
 * record) for maintenance to replay into the eviction policy, and where the accesses are counted:
 * striped, lossy rings with one consumer.
 *
 * <p>Recording is deliberately lossy and costs a producer three plain stores: it writes the pair
 * at its stripe's tail and moves the tail on, with no atomic instruction and without reading
 * anything the consumer writes. Two threads on one stripe may overwrite each other's pair, pair
 * one's hash with the other's reference, or move the tail back; a producer that laps the consumer
 * overwrites the oldest pairs. Every pair drained was recorded by someone (each long is written
 * whole), so the consumer must only accept pairs that may be mismatched or stale: the policy
 * counts a hash and checks a reference against the page it points into (see {@code
 * NativeCache.applyAccess}). Losing a few accesses blurs the policy's estimates; an atomic per
 * access would cost every read (measured: a CAS on the ring's tail, and the consumer's writes to
 * the head and the slots that the producers then had to fetch back, were most of a read's
 * bookkeeping).
 *
 * <p>Counting is exact. A thread whose number ({@code KeyScratch.ordinal}) is below the stripe
 * count is the only thread ever given that stripe, and counts on a counter of its own with a plain
 * read and a plain store; every other thread counts with an atomic add on the stripe's shared
 * counter. Both are on a line only producers write, and a count is their sum. The atomic was a
 * {@code lock xadd} per GET, a full fence on x86 that kept the next call's loads from starting
 * before it (docs/speed-work.md, forty-third session). The cache counts its hits and puts here.
 *
 * <p>A stripe is chosen by the caller's thread index (a number each thread keeps, handed out in
 * turn, so that the first threads get stripes of their own); each stripe's counters fill 128
 * bytes (the consumer's head on one cache line, the producers' tail and count on the next), and
 * its ring is padded from the next stripe's. {@link #record} and {@link #count} are safe from
 * any thread; {@link #drainTo} must be called by one thread at a time (the caller holds the
 * maintenance lock). Nothing is allocated after construction.
 */
public final class AccessBuffer {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    /** What a drain hands each recorded access to. */
    @FunctionalInterface
    public interface Sink {
        void accept(long hash, long ref);
    }

    /** The reference of an access recorded without one. */
    public static final long NO_REF = -1L;

    /** Longs of padding per stripe: 128 bytes. */
    static final int PAD = 16;

    /** A stripe's consumer-owned head, on the first line of its 16 counter longs. */
    private static final int HEAD = 0;

    /** The producers' tail and count of accesses, on the second line. */
    private static final int TAIL = 8;

    private static final int COUNT = 9;

    /** The count of the stripe's sole thread (the one whose number is the stripe's), on the same line. */
    private static final int SOLE_COUNT = 10;

    private final int stripeMask;
    private final int capacity;
    private final int mask;
    private final int slotStride;
    /** Each stripe's ring of (reference, hash) pairs, after a pad; one pad more at the end. */
    final long[] slots;
    /** Each stripe's counters in their own 128 bytes, after a pad in front of all. */
    final long[] counters;
    /**
     * How many thread numbers have been handed out (every caller's is below it): stripes from
     * there on have never been used, and the loops over stripes stop before them. Stripes go by
     * cores; on a machine of many cores few threads may use a cache, and a drain that looked at
     * every stripe cost one thread's inserts at 10K ~9% more instructions with 64 stripes than with 4.
     */
    private final LongSupplier threadsNumbered;

    /**
     * Rings of {@code capacityPerStripe} accesses in each of {@code stripes} stripes. Both must be
     * powers of two.
     */
    public AccessBuffer(int stripes, int capacityPerStripe) {
        this(stripes, capacityPerStripe, () -> Long.MAX_VALUE);
    }

    /**
     * Rings as above, whose callers' thread numbers are all below what {@code threadsNumbered}
     * answers at the time (it only grows): the drain and the sums look at that many stripes.
     */
    public AccessBuffer(int stripes, int capacityPerStripe, LongSupplier threadsNumbered) {
        this.threadsNumbered = threadsNumbered;
        requirePowerOfTwo("stripes", stripes);
        requirePowerOfTwo("capacityPerStripe", capacityPerStripe);
        long slotCount = (long) stripes * (2L * capacityPerStripe + PAD) + PAD;
        if (slotCount > Integer.MAX_VALUE - 16 || (long) (stripes + 1) * PAD > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "stripes × capacityPerStripe too large: " + stripes + " × " + capacityPerStripe);
        }
        this.stripeMask = stripes - 1;
        this.capacity = capacityPerStripe;
        this.mask = capacityPerStripe - 1;
        this.slotStride = 2 * capacityPerStripe + PAD;
        this.slots = new long[(int) slotCount];
        this.counters = new long[(stripes + 1) * PAD];
    }

    /** The stripes a thread numbered so far may have used: those below its count, or all. */
    private int stripesUsed() {
        return (int) Math.min(stripeMask + 1L, threadsNumbered.getAsLong());
    }

    private static void requirePowerOfTwo(String name, int value) {
        if (value <= 0 || Integer.bitCount(value) != 1) {
            throw new IllegalArgumentException(name + " must be a positive power of two: " + value);
        }
    }

    /**
     * Records an access to the key with this hash and a reference to its record ({@link #NO_REF}
     * for none), from any thread, on the stripe of the caller's {@code thread} index, without
     * waiting and without an atomic instruction. Returns the stripe's new tail: the caller may
     * have the buffer drained when it passes a multiple of some interval.
     */
    public long record(int thread, long hash, long ref) {
        int stripe = stripeOf(thread);
        int tailIndex = counterBase(stripe) + TAIL;
        long tail = (long) LONGS.getOpaque(counters, tailIndex);
        int index = slotIndex(stripe, tail);
        LONGS.setOpaque(slots, index - 1, ref);
        LONGS.setOpaque(slots, index, hash);
        LONGS.setRelease(counters, tailIndex, tail + 1); // the pair is visible to whoever sees the tail
        return tail + 1;
    }

    /**
     * Whether the stripe of the caller's {@code thread} index holds a whole ring of accesses not
     * yet drained: a producer that must not lose its access drains first. A racy estimate.
     */
    public boolean isFull(int thread) {
        int base = counterBase(stripeOf(thread));
        return (long) LONGS.getOpaque(counters, base + TAIL) - (long) LONGS.getOpaque(counters, base + HEAD)
                >= capacity;
    }

    /**
     * Counts one access, exactly, on the stripe of the caller's thread number {@code ordinal}
     * (its {@code KeyScratch.ordinal}; the stripe is that of its low 32 bits, as for {@link
     * #record}): without an atomic if the caller is the stripe's sole thread (its number is below
     * the stripe count), else with an atomic add. Returns the caller's count on the stripe with
     * it, which callers may use to sample (every n-th access).
     */
    public long count(long ordinal) {
        return add(ordinal, 1);
    }

    /** Takes back one count of the caller's ({@link #count}): the access did not happen after all. */
    public void uncount(long ordinal) {
        add(ordinal, -1);
    }

    /** Adds {@code delta} to the caller's count on its stripe (see {@link #count}); returns the new count. */
    private long add(long ordinal, long delta) {
        int base = counterBase(stripeOf((int) ordinal));
        if (soleOnStripe(ordinal)) {
            long c = (long) LONGS.getOpaque(counters, base + SOLE_COUNT) + delta;
            LONGS.setOpaque(counters, base + SOLE_COUNT, c);
            return c;
        }
        return (long) LONGS.getAndAdd(counters, base + COUNT, delta) + delta;
    }

    /**
     * Whether the thread numbered {@code ordinal} is the only one ever given its stripe: numbers
     * are handed out in turn and never again, so number s is the only one below the stripe count
     * that maps to stripe s; every later number on that stripe is at least the stripe count.
     */
    private boolean soleOnStripe(long ordinal) {
        return ordinal >= 0 && ordinal <= stripeMask;
    }

    /**
     * Every access counted so far: exact once the counting calls have returned (and their
     * threads' stores are visible: after a join, or any other happens-before).
     */
    public long counted() {
        long sum = 0;
        for (int stripe = 0, used = stripesUsed(); stripe < used; stripe++) {
            int base = counterBase(stripe);
            sum += (long) LONGS.getVolatile(counters, base + COUNT)
                    + (long) LONGS.getVolatile(counters, base + SOLE_COUNT);
        }
        return sum;
    }

    /**
     * Passes the accesses recorded since the last drain to {@code sink}, stripe by stripe, oldest
     * first within a stripe (those overwritten meanwhile are lost), and returns how many. Single
     * consumer: the caller holds the maintenance lock.
     */
    public int drainTo(Sink sink) {
        int drained = 0;
        for (int stripe = 0, used = stripesUsed(); stripe < used; stripe++) {
            int base = counterBase(stripe);
            long head = counters[base + HEAD]; // only this thread writes it
            long tail = (long) LONGS.getAcquire(counters, base + TAIL);
            if (head == tail) {
                continue; // nothing recorded since: the head's line is left alone
            }
            if (tail - head > capacity) {
                head = tail - capacity; // lapped: the oldest accesses were overwritten
            } else if (tail < head) {
                head = tail; // racing producers moved the tail back: start again from it
            }
            // Published before the sink runs, so a sink that throws loses at most this round.
            LONGS.setOpaque(counters, base + HEAD, tail);
            for (; head < tail; head++) {
                int index = slotIndex(stripe, head);
                long hash = (long) LONGS.getOpaque(slots, index);
                long ref = (long) LONGS.getOpaque(slots, index - 1);
                drained++;
                sink.accept(hash, ref);
            }
        }
        return drained;
    }

    /**
     * Accesses recorded so far, summed over the stripes' tails (drains do not lower it; racing
     * producers on one stripe can): for tests and diagnostics.
     */
    public long recorded() {
        long sum = 0;
        for (int stripe = 0, used = stripesUsed(); stripe < used; stripe++) {
            sum += (long) LONGS.getAcquire(counters, counterBase(stripe) + TAIL);
        }
        return sum;
    }

    /** Accesses recorded and not yet drained, summed over the stripes: a moment's estimate. */
    public long pending() {
        long sum = 0;
        for (int stripe = 0, used = stripesUsed(); stripe < used; stripe++) {
            int base = counterBase(stripe);
            long head = (long) LONGS.getOpaque(counters, base + HEAD);
            long tail = (long) LONGS.getAcquire(counters, base + TAIL);
            sum += Math.max(0, Math.min(capacity, tail - head));
        }
        return sum;
    }

    /** Accesses a stripe holds at most. */
    public int capacity() {
        return capacity;
    }

    /** The stripe of the caller's thread index (see {@code KeyScratch.threadIndex}). */
    private int stripeOf(int thread) {
        return thread & stripeMask;
    }

    /** Index in {@link #counters} of the stripe's first counter long (its head). */
    int counterBase(int stripe) {
        return (stripe + 1) * PAD;
    }

    /**
     * Index in {@link #slots} of the hash of the stripe's slot for position {@code position}; its
     * reference is the long before it.
     */
    int slotIndex(int stripe, long position) {
        return PAD + stripe * slotStride + 2 * (int) (position & mask) + 1;
    }
}
