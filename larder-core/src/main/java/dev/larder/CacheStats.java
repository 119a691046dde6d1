package dev.larder;

/**
 * A snapshot of a cache's counters, read on demand. Counters are cumulative since the cache was
 * built; sizes and memory are the values at the time of the snapshot.
 *
 * @param hitCount lookups that found a live entry
 * @param missCount lookups that found none (absent or expired)
 * @param putCount values stored (puts, replaces, computes, merges and loads)
 * @param removalCount entries removed explicitly by the user
 * @param evictionCount entries evicted for size
 * @param expirationCount entries removed because they expired
 * @param rejectedPutCount puts refused because the entry cannot fit the cache
 * @param survivedFailureCount failures the cache went on from, each also logged as a warning: a
 *     maintenance pass that threw (a bug; the pass stops and the next one starts over), a
 *     reading of the {@link Ticker} that threw during maintenance, an entry removed whose value
 *     the codecs could not read back for the removal listener; zero in a healthy cache
 * @param loadSuccessCount loads that returned a value
 * @param loadFailureCount loads that threw or returned null
 * @param totalLoadTimeNanos time spent in loads
 * @param size live entries
 * @param memoryUsedBytes native memory held by the cache now (records, index, metadata)
 * @param memoryMaxBytes the cache's native memory budget
 */
public record CacheStats(
        long hitCount,
        long missCount,
        long putCount,
        long removalCount,
        long evictionCount,
        long expirationCount,
        long rejectedPutCount,
        long survivedFailureCount,
        long loadSuccessCount,
        long loadFailureCount,
        long totalLoadTimeNanos,
        long size,
        long memoryUsedBytes,
        long memoryMaxBytes) {

    /** Lookups: hits plus misses. */
    public long requestCount() {
        return hitCount + missCount;
    }

    /** Hits over lookups, or 1.0 when there were none (as Caffeine does). */
    public double hitRate() {
        long requests = requestCount();
        return requests == 0 ? 1.0 : (double) hitCount / requests;
    }

    /** Evictions of every cause: size plus expiry. */
    public long evictionCountAllCauses() {
        return evictionCount + expirationCount;
    }

    /** Mean time of a load, or 0 when there were none. */
    public double averageLoadPenaltyNanos() {
        long loads = loadSuccessCount + loadFailureCount;
        return loads == 0 ? 0.0 : (double) totalLoadTimeNanos / loads;
    }
}
