package dev.larder.internal;

import dev.larder.Codec;
import dev.larder.RemovalListener;
import dev.larder.Ticker;
import java.util.concurrent.Executor;

/**
 * The validated settings of one cache, as the builder hands them over. Negative numbers mean
 * "not set". {@code partitions} is the count the builder asked for; in the settings of one
 * partition ({@link #forPartition}), the count of partitions it is one of.
 */
public record CacheConfig<K, V>(
        Codec<K> keyCodec,
        Codec<V> valueCodec,
        long maximumBytes,
        long maximumEntries,
        long expectedEntries,
        long indexMemoryBudget,
        long expireAfterWriteNanos,
        long expireAfterAccessNanos,
        int concurrencyLevel,
        Ticker ticker,
        RemovalListener<? super K, ? super V> removalListener,
        Executor executor,
        boolean adviseHugePages,
        int partitions) {

    /**
     * The settings of partition {@code i} of {@code n}: the bounds, the expectation and the
     * index's budget split evenly (keys are spread by hash; the entry bounds add up to the whole
     * one), the rest shared.
     */
    public CacheConfig<K, V> forPartition(int i, int n) {
        return new CacheConfig<>(
                keyCodec,
                valueCodec,
                maximumBytes / n,
                maximumEntries > 0 ? maximumEntries / n + (i < maximumEntries % n ? 1 : 0) : maximumEntries,
                share(expectedEntries, n),
                indexMemoryBudget > 0 ? indexMemoryBudget / n : indexMemoryBudget,
                expireAfterWriteNanos,
                expireAfterAccessNanos,
                concurrencyLevel > 0 ? Math.max(1, concurrencyLevel / n) : concurrencyLevel,
                ticker,
                removalListener,
                executor,
                adviseHugePages,
                n);
    }

    /** An n-th of a setting, rounded up (never 0 for a set one); "not set" stays so. */
    private static long share(long setting, int n) {
        return setting > 0 ? (setting + n - 1) / n : setting;
    }
}
