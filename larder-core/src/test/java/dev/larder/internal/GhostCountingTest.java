package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import org.junit.jupiter.api.Test;

/**
 * What the cache reports to the ghost lists: an insert of a key evicted lately is a ghost hit;
 * an overwrite of a key present is not looked up at all (it has no ghost).
 */
class GhostCountingTest {
    private static final int MAX = 1_000;

    private static LarderCache<Long, byte[]> cache() {
        return Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .maximumEntries(MAX)
                .executor(Runnable::run)
                .build();
    }

    private static long ghostHits(LarderCache<Long, byte[]> cache) {
        cache.cleanUp(); // drains the write buffer into the policy
        return ((NativeCache<?, ?>) cache).policy.ghostHits();
    }

    @Test
    void reinsertingAKeyJustEvictedCountsAGhostHit() {
        try (LarderCache<Long, byte[]> cache = cache()) {
            long next = 0;
            while (next < 3L * MAX) {
                cache.put(next++, new byte[8]);
            }
            long before = ghostHits(cache);
            // The keys evicted last: a few of the most recent absent ones.
            int reinserted = 0;
            for (long k = next - 1; k >= 0 && reinserted < 10; k--) {
                if (!cache.containsKey(k)) {
                    cache.put(k, new byte[8]);
                    reinserted++;
                }
            }
            assertThat(reinserted).isEqualTo(10);
            // Each is a ghost hit unless its ghost was displaced (direct-mapped slots, hashes
            // seeded per cache) or aged past the horizon by the re-insertions' own evictions.
            assertThat(ghostHits(cache) - before).isBetween((long) reinserted / 2, (long) reinserted);
        }
    }

    @Test
    void overwritingKeysPresentCountsNoGhostHit() {
        try (LarderCache<Long, byte[]> cache = cache()) {
            for (long k = 0; k < 3L * MAX; k++) {
                cache.put(k, new byte[8]);
            }
            long before = ghostHits(cache);
            for (int round = 0; round < 5; round++) {
                for (long k = 0; k < 3L * MAX; k++) {
                    if (cache.containsKey(k)) {
                        cache.put(k, new byte[8]); // in place: same shape
                        cache.put(k, new byte[9]); // appended: another shape
                    }
                }
            }
            assertThat(ghostHits(cache)).isEqualTo(before);
        }
    }
}
