package dev.larder.internal.policy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongConsumer;

/**
 * Where readers record the keys they accessed (as 64-bit hashes) for the maintenance thread to
 * replay into the eviction policy: striped, lossy, multi-producer single-consumer ring buffers.
 *
 * <p>A reader's stripe is chosen by its thread id, so readers on different stripes share no
 * written memory; each stripe's head and tail live in their own 128 bytes (two cache lines,
 * against adjacent-line prefetch), and so does each stripe's ring of slots. A reader never
 * waits: when its stripe is full, or another reader on the same stripe wins the race for the
 * next slot, the record is dropped. Dropping a few accesses only blurs the frequency estimates;
 * blocking a reader would cost far more.
 *
 * <p>A slot holding 0 is empty, so a hash of 0 is recorded as 1. A producer claims a slot by
 * moving the tail with a CAS, then writes it with a release store; the consumer reads it with
 * an acquire load, and stops at a claimed slot not yet written, leaving it for the next drain.
 *
 * <p>{@link #offer} is safe from any thread; {@link #drainTo} must be called by one thread at a
 * time (the caller holds the maintenance lock). Nothing is allocated after construction.
 */
public final class ReadBuffer {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    /** Longs of padding per stripe: 128 bytes. */
    static final int PAD = 16;
    /** Index of a stripe's head within its 16 counter longs; the tail is the next long. */
    private static final int HEAD = 0;

    private static final int TAIL = 1;

    private final int stripeMask;
    private final int capacity;
    private final int mask;
    private final int slotStride;
    /** Each stripe's ring, capacity longs, after a pad; one pad more at the end. */
    final long[] slots;
    /** Each stripe's head and tail in its own 128 bytes, after a pad in front of all. */
    final long[] counters;

    /**
     * Buffers of {@code capacityPerStripe} hashes in each of {@code stripes} stripes. Both must
     * be powers of two; a few stripes per core and 16 to 64 slots per stripe are typical.
     */
    public ReadBuffer(int stripes, int capacityPerStripe) {
        requirePowerOfTwo("stripes", stripes);
        requirePowerOfTwo("capacityPerStripe", capacityPerStripe);
        long slotCount = (long) stripes * (capacityPerStripe + PAD) + PAD;
        if (slotCount > Integer.MAX_VALUE - 16 || (long) (stripes + 1) * PAD > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "stripes × capacityPerStripe too large: " + stripes + " × " + capacityPerStripe);
        }
        this.stripeMask = stripes - 1;
        this.capacity = capacityPerStripe;
        this.mask = capacityPerStripe - 1;
        this.slotStride = capacityPerStripe + PAD;
        this.slots = new long[(int) slotCount];
        this.counters = new long[(stripes + 1) * PAD];
    }

    private static void requirePowerOfTwo(String name, int value) {
        if (value <= 0 || Integer.bitCount(value) != 1) {
            throw new IllegalArgumentException(name + " must be a positive power of two: " + value);
        }
    }

    /**
     * Records an access to the key with this hash, from any thread. Returns false if the record
     * was dropped: the calling thread's stripe is full (time to drain) or another thread on the
     * same stripe took the slot at the same moment (dropped rather than retried, so a reader
     * never spins).
     */
    public boolean offer(long hash) {
        int stripe = stripeOfCurrentThread();
        int base = counterBase(stripe);
        long head = (long) LONGS.getAcquire(counters, base + HEAD);
        long tail = (long) LONGS.getAcquire(counters, base + TAIL);
        if (tail - head >= capacity) {
            return false;
        }
        if (!LONGS.compareAndSet(counters, base + TAIL, tail, tail + 1)) {
            return false;
        }
        // The slot is empty: its previous hash (position tail - capacity < head) was consumed and
        // zeroed before the consumer published the head we read with acquire.
        LONGS.setRelease(slots, slotIndex(stripe, tail), hash == 0 ? 1L : hash);
        return true;
    }

    /**
     * Passes every recorded hash to {@code sink}, stripe by stripe, oldest first within a stripe,
     * and returns how many. Single consumer: the caller holds the maintenance lock. A slot
     * claimed but not yet written ends its stripe's drain; it and the slots after it wait for the
     * next drain.
     */
    public int drainTo(LongConsumer sink) {
        int drained = 0;
        for (int stripe = 0; stripe <= stripeMask; stripe++) {
            int base = counterBase(stripe);
            long head = (long) LONGS.getOpaque(counters, base + HEAD); // only this thread writes it
            long tail = (long) LONGS.getAcquire(counters, base + TAIL);
            for (; head < tail; head++) {
                int index = slotIndex(stripe, head);
                long hash = (long) LONGS.getAcquire(slots, index);
                if (hash == 0) {
                    break; // claimed, not yet written
                }
                slots[index] = 0;
                // Release: a producer that sees the new head also sees the slot empty. Published
                // per slot, so a sink that throws loses no more than the hash it was given.
                LONGS.setRelease(counters, base + HEAD, head + 1);
                drained++;
                sink.accept(hash);
            }
        }
        return drained;
    }

    /** Hashes claimed but not yet drained, summed over the stripes: a moment's estimate. */
    public long pending() {
        long sum = 0;
        for (int stripe = 0; stripe <= stripeMask; stripe++) {
            int base = counterBase(stripe);
            long head = (long) LONGS.getAcquire(counters, base + HEAD);
            long tail = (long) LONGS.getAcquire(counters, base + TAIL);
            sum += tail - head; // head read first: tail ≥ head
        }
        return sum;
    }

    /** The calling thread's stripe: its thread id, Fibonacci-hashed so ids spread evenly. */
    int stripeOfCurrentThread() {
        return (int) ((Thread.currentThread().threadId() * 0x9E37_79B9_7F4A_7C15L) >>> 32) & stripeMask;
    }

    /** Index in {@link #counters} of the stripe's head; its tail is the next long. */
    int counterBase(int stripe) {
        return (stripe + 1) * PAD;
    }

    int tailIndex(int stripe) {
        return counterBase(stripe) + TAIL;
    }

    /** Index in {@link #slots} of the stripe's slot for position {@code position}. */
    int slotIndex(int stripe, long position) {
        return PAD + stripe * slotStride + (int) (position & mask);
    }
}
