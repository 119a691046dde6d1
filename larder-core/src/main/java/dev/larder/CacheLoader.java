package dev.larder;

/**
 * Computes a value for a key that the cache does not hold. At most one load per key runs at a
 * time; other callers for the same key wait for it. An exception reaches the caller and
 * nothing is cached.
 */
@FunctionalInterface
public interface CacheLoader<K, V> {
    /** Returns the value for {@code key}, or null if there is none (nothing is cached). */
    V load(K key) throws Exception;

    /** Computes a new value for a key that is being refreshed; by default loads it again. */
    default V reload(K key, V oldValue) throws Exception {
        return load(key);
    }
}
