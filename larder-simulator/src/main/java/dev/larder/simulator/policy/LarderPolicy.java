package dev.larder.simulator.policy;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderBuilder;
import dev.larder.LarderCache;

/**
 * The real Larder cache through its public API: {@code maximumEntries(capacity)} with a byte
 * budget large enough that only the entry bound binds, long keys and a 1-byte value, and its
 * maintenance run on the calling thread (as Caffeine's column is), so a replay is deterministic
 * for a given hash seed. A hit is a non-null {@code getIfPresent}; a miss is followed by a
 * {@code put}.
 *
 * <p>This is the only class of the simulator that knows Larder; a direct adapter to the
 * eviction policy can replace it without touching the rest.
 */
public final class LarderPolicy implements Policy {
    /** The byte budget's floor; above it, 256 bytes per entry, far more than a record needs. */
    static final long MIN_BUDGET = 64L << 20;

    static final long BYTES_PER_ENTRY = 256;

    private static final byte[] VALUE = {1};

    private final LarderCache<Long, byte[]> cache;
    private final int capacity;

    public LarderPolicy(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.capacity = capacity;
        LarderBuilder<Long, byte[]> builder = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(Math.max(MIN_BUDGET, capacity * BYTES_PER_ENTRY))
                .maximumEntries(capacity)
                .executor(Runnable::run); // maintenance on the calling thread: deterministic
        if (PARTITIONS > 0) {
            builder.partitions(PARTITIONS);
        }
        this.cache = builder.build();
    }

    /**
     * {@code -Dlarder.simulator.partitions=N} (through {@code -Dsimulate.jvmArgs}): every Larder
     * cache is built with N partitions instead of the default for the machine and its size, to
     * measure what splitting a cache costs in hit rate.
     */
    static final int PARTITIONS = Integer.getInteger("larder.simulator.partitions", -1);

    @Override
    public boolean access(long key) {
        if (cache.getIfPresent(key) != null) {
            return true;
        }
        cache.put(key, VALUE);
        return false;
    }

    /** Entries held now; never above the capacity if the bound is honoured. */
    public long size() {
        return cache.size();
    }

    public int capacity() {
        return capacity;
    }

    @Override
    public String name() {
        return "larder";
    }

    @Override
    public void close() {
        cache.close();
    }
}
