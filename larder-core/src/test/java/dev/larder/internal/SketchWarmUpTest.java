package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.internal.policy.FrequencySketch;
import org.junit.jupiter.api.Test;

/**
 * The frequency sketch counts accesses only once the cache is full: it holds its entry bound, or
 * has evicted (see {@code WindowTinyLfu#counting}), so a cache bounded by bytes alone, whose
 * entry capacity is only a guess, still starts. And it stays at 3 bytes per entry of the bound
 * when the entry count passes the bound by the eviction's slack.
 */
class SketchWarmUpTest {
    private static boolean counting(LarderCache<?, ?> cache) {
        return ((NativeCache<?, ?>) cache).policy.counting();
    }

    @Test
    void countingStartsWhenTheEntryBoundIsHeld() {
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .maximumEntries(1_000)
                .build()) {
            for (long k = 0; k < 999; k++) {
                cache.put(k, new byte[] {1});
            }
            cache.cleanUp();
            assertThat(counting(cache)).isFalse();
            cache.put(999L, new byte[] {1});
            cache.cleanUp();
            assertThat(counting(cache)).isTrue();
        }
    }

    @Test
    void countingStartsWithTheFirstEvictionInACacheBoundedByBytesAlone() {
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(8L << 20)
                .build()) {
            long k = 0;
            while (cache.memoryUsed() < (4L << 20)) {
                cache.put(k++, new byte[4096]);
            }
            cache.cleanUp();
            assertThat(cache.stats().evictionCount()).isZero();
            assertThat(counting(cache))
                    .as("half the bytes, nothing evicted yet")
                    .isFalse();
            while (cache.stats().evictionCount() == 0) {
                cache.put(k++, new byte[4096]);
            }
            cache.cleanUp();
            assertThat(counting(cache)).isTrue();
            // The entry capacity it guessed from the budget (one entry per KiB) is far away.
            assertThat(cache.size()).isLessThan(4096);
        }
    }

    @Test
    void theSketchStaysAtItsBytesPerEntryOfTheBoundWhenTheCountPassesIt() {
        int bound = 100_000;
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(256L << 20)
                .maximumEntries(bound)
                .partitions(1) // one sketch for the whole bound
                .build()) {
            NativeCache<?, ?> nativeCache = (NativeCache<?, ?>) cache;
            long sized = nativeCache.policy.sketchBytes();
            assertThat(sized).isEqualTo(FrequencySketch.bytesFor(bound));
            for (long k = 0; k < 3L * bound; k++) {
                cache.put(k, new byte[] {1});
            }
            cache.cleanUp();
            assertThat(cache.stats().evictionCount()).isGreaterThan(0);
            assertThat(nativeCache.policy.sketchBytes())
                    .as("the sketch after the bound was passed")
                    .isEqualTo(sized);
        }
    }

    @Test
    void aKeyReadOftenWinsItsPlaceInACacheBoundedByBytesAlone() {
        // About 1,900 entries of 4 KiB. The hot key appears once the cache is full and is read
        // once per 100 one-time keys: too rarely to live in the window (about 19 entries), often
        // enough to beat one-time keys in the duel, which it can only do if the sketch counts.
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(8L << 20)
                .executor(Runnable::run)
                .build()) {
            long hot = -1;
            int hotReads = 0;
            int hotHits = 0;
            for (long k = 0; k < 40_000; k++) {
                cache.put(k, new byte[4096]);
                if (k >= 5_000 && k % 100 == 0) {
                    boolean hit = cache.getIfPresent(hot) != null;
                    if (!hit) {
                        cache.put(hot, new byte[4096]);
                    }
                    if (k >= 20_000) {
                        hotReads++;
                        hotHits += hit ? 1 : 0;
                    }
                }
            }
            assertThat(hotHits).as("hits of the hot key in the second half").isGreaterThan(hotReads * 9 / 10);
        }
    }
}
