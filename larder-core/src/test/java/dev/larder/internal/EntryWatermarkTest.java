package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * The entry bound's watermarks: above the low watermark writes have eviction run in the
 * background (here, the executor); writers evict on their own thread only at the bound.
 */
class EntryWatermarkTest {
    private static final byte[] VALUE = {1, 2, 3, 4};

    private static LarderCache<Long, byte[]> cache(long maximumEntries, Executor executor) {
        return Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(256L << 20)
                .maximumEntries(maximumEntries)
                .executor(executor)
                .build();
    }

    private static NativeCache<?, ?> internals(LarderCache<?, ?> cache) {
        return (NativeCache<?, ?>) cache;
    }

    @Test
    void theGapIsAFiveHundredTwelfthOfTheBoundFromFourThousandNinetySixEntries() {
        assertThat(Evictor.entryGap(4_095)).isZero();
        assertThat(Evictor.entryGap(4_096)).isEqualTo(8);
        assertThat(Evictor.entryGap(1_000_000)).isEqualTo(1_953);
        assertThat(Evictor.entryGap(1L << 40)).isEqualTo(4_096);
        assertThat(Evictor.entryGap(Long.MAX_VALUE)).isZero(); // no entry bound
    }

    @Test
    void withEvictionKeepingUpWritersNeverEvictAndTheCacheStaysBetweenTheWatermarks() {
        int max = 10_000;
        long gap = Evictor.entryGap(max);
        // The executor runs maintenance at once: background eviction always keeps up.
        try (LarderCache<Long, byte[]> cache = cache(max, Runnable::run)) {
            for (long k = 0; k < 60_000; k++) {
                cache.put(k, VALUE);
                assertThat(cache.size()).isLessThanOrEqualTo(max - gap);
            }
            assertThat(internals(cache).writerEntryEvictions.sum()).isZero();
            assertThat(cache.size()).isGreaterThanOrEqualTo(max - 2 * gap);
            assertThat(cache.stats().evictionCount()).isEqualTo(60_000 - cache.size());
        }
    }

    @Test
    void withoutBackgroundEvictionWritersEvictAtTheBoundAndNeverPassIt() {
        int max = 10_000;
        // An executor that drops every task: only writers evict.
        try (LarderCache<Long, byte[]> cache = cache(max, task -> {})) {
            for (long k = 0; k < 60_000; k++) {
                cache.put(k, VALUE);
                assertThat(cache.size()).isLessThanOrEqualTo(max);
            }
            assertThat(internals(cache).writerEntryEvictions.sum()).isPositive();
        }
    }

    @Test
    void aSmallCacheEvictsOnlyAtItsBoundAndKeepsEveryEntrySlot() {
        int max = 1_000;
        try (LarderCache<Long, byte[]> cache = cache(max, Runnable::run)) {
            for (long k = 0; k < 5_000; k++) {
                cache.put(k, VALUE);
            }
            assertThat(cache.size()).isEqualTo(max);
        }
    }
}
