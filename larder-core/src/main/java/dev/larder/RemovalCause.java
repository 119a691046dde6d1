package dev.larder;

/** Why an entry left the cache. The names match Caffeine's. */
public enum RemovalCause {
    /** Removed by the user: remove, invalidate, clear, a compute that returned null. */
    EXPLICIT,
    /** Its value was replaced by a put, replace, compute or merge. */
    REPLACED,
    /** Its time to live ran out (after write, after access, or its own TTL). */
    EXPIRED,
    /** Evicted to stay within the byte budget or the maximum entry count. */
    SIZE;

    /** Returns whether the entry was removed by the cache itself rather than by the user. */
    public boolean wasEvicted() {
        return this == EXPIRED || this == SIZE;
    }
}
