package dev.larder;

/**
 * Told about every entry that leaves the cache, with the cause.
 *
 * <p>Called on the thread that caused the removal (or the maintenance thread for evictions and
 * expirations), after the entry is gone. The key and value are decoded copies. A listener that
 * throws is logged and ignored: it never breaks the cache. Keep it fast.
 */
@FunctionalInterface
public interface RemovalListener<K, V> {
    void onRemoval(K key, V value, RemovalCause cause);
}
