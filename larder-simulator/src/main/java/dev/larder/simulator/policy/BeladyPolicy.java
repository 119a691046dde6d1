package dev.larder.simulator.policy;

import dev.larder.simulator.util.LongIntMap;
import dev.larder.simulator.util.MaxBitSet;

/**
 * Bélády's clairvoyant optimum (MIN): on a miss, of the resident keys and the newcomer, the one
 * whose next request is farthest in the future is dropped, so no online policy can score more
 * hits on the same sequence with the same capacity. The newcomer may be the one dropped (it is
 * not admitted), which makes this the bound for policies with admission, like Caffeine's, too.
 *
 * <p>Offline: it is built from the whole request sequence and must then be driven by exactly
 * that sequence, in order. Each resident key is represented by the position of its next request
 * alone (positions are unique), held in a {@link MaxBitSet}: the key requested at position
 * {@code i} is resident iff position {@code i} is in the set, and the eviction victim is the
 * set's maximum. A key never requested again gets the unique position {@code n + i}, beyond
 * every real one. Memory: an {@code int} per request plus {@code 2n} bits.
 */
public final class BeladyPolicy implements Policy {
    private final long[] requests;
    private final int[] nextUse;
    private final MaxBitSet resident;
    private final int capacity;
    private int position;
    private int size;

    public BeladyPolicy(int capacity, long[] requests) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        if (requests.length > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("too many requests: " + requests.length);
        }
        this.capacity = capacity;
        this.requests = requests;
        this.nextUse = nextUses(requests);
        this.resident = new MaxBitSet(2 * requests.length);
    }

    /** For each position, the position of the next request of the same key, or {@code n + i}. */
    static int[] nextUses(long[] requests) {
        int n = requests.length;
        int[] next = new int[n];
        LongIntMap lastSeen = new LongIntMap(1 << 16);
        for (int i = n - 1; i >= 0; i--) {
            int later = lastSeen.put(requests[i], i);
            next[i] = later >= 0 ? later : n + i;
        }
        return next;
    }

    @Override
    public boolean access(long key) {
        int i = position;
        if (i >= requests.length || requests[i] != key) {
            throw new IllegalStateException("Bélády must be driven by the sequence it was built from; position " + i);
        }
        position++;
        boolean hit = resident.get(i);
        if (hit) {
            resident.clear(i);
        } else {
            size++;
        }
        resident.set(nextUse[i]);
        if (size > capacity) {
            resident.clear(resident.max());
            size--;
        }
        return hit;
    }

    @Override
    public String name() {
        return "belady";
    }
}
