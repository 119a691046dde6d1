package dev.larder.internal;

import dev.larder.CacheLoader;
import dev.larder.LoadingLarderCache;

/** Builds a cache from the builder's settings: one {@link NativeCache}, or partitions of one. */
public final class Caches {
    private Caches() {}

    public static <K, V> LoadingLarderCache<K, V> create(CacheConfig<K, V> config, CacheLoader<? super K, V> loader) {
        int n = config.partitions() > 0
                ? config.partitions()
                : CacheSizing.partitions(
                        config.maximumBytes(),
                        config.maximumEntries(),
                        config.expectedEntries(),
                        Runtime.getRuntime().availableProcessors());
        if (n == 1) {
            return NativeCache.create(config, loader);
        }
        return PartitionedCache.create(config, loader, n);
    }
}
