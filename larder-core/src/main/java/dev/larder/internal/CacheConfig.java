package dev.larder.internal;

import dev.larder.Codec;
import dev.larder.RemovalListener;
import dev.larder.Ticker;
import java.util.concurrent.Executor;

/**
 * The validated settings of one cache, as the builder hands them over. Negative numbers mean
 * "not set".
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
        boolean adviseHugePages) {}
