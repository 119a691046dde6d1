package dev.larder.simulator.policy;

/**
 * A cache of a fixed number of entries, seen only through its hits: {@link #access} looks a key
 * up and, on a miss, inserts it (read-through), as every trace request is a read of one object
 * of uniform size.
 */
public interface Policy extends AutoCloseable {
    /** Requests {@code key}: true on a hit; on a miss the key is inserted (the policy may decline it). */
    boolean access(long key);

    /** The column name, e.g. {@code lru}. */
    String name();

    /** Releases what the policy holds (native memory, for Larder). */
    @Override
    default void close() {}
}
