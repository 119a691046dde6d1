package dev.larder;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** A cache that loads absent values with its {@link CacheLoader}. */
public interface LoadingLarderCache<K, V> extends LarderCache<K, V> {

    /**
     * Returns the value for {@code key}, loading it if absent: one load per key at a time, the
     * other callers wait. A loader exception reaches the caller (checked ones wrapped in {@link
     * java.util.concurrent.CompletionException}) and caches nothing.
     */
    V get(K key);

    /** Returns the values for {@code keys}, loading the absent ones. */
    Map<K, V> getAll(Iterable<? extends K> keys);

    /**
     * Loads a new value for {@code key} in the background with {@link CacheLoader#reload};
     * readers keep getting the old value until the new one is stored. A failed reload leaves
     * the old value in place. The future completes with the new value (or null).
     */
    CompletableFuture<V> refresh(K key);
}
