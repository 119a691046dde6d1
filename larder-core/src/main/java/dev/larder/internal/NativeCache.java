package dev.larder.internal;

import dev.larder.CacheLoader;
import dev.larder.LoadingLarderCache;

/** Placeholder while the engine is written; replaced in the engine commit. */
public abstract class NativeCache<K, V> implements LoadingLarderCache<K, V> {
    public static <K, V> NativeCache<K, V> create(CacheConfig<K, V> config, CacheLoader<? super K, V> loader) {
        throw new UnsupportedOperationException("engine not yet written");
    }
}
