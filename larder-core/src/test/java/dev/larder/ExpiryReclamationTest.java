package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Expired entries are reclaimed by whole pages, wherever they sit in the log. */
class ExpiryReclamationTest {

    @Test
    void expiredPagesBehindLiveOnesAreReclaimedWithoutTouchingTheLiveOnes() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        ConcurrentHashMap<Long, RemovalCause> removed = new ConcurrentHashMap<>();
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .ticker(now::get)
                .removalListener((k, v, cause) -> removed.put(k, cause))
                .build()) {
            byte[] value = new byte[200];
            for (long i = 0; i < 20_000; i++) {
                cache.put(i, value); // immortal: the oldest end of the log stays live
            }
            for (long i = 20_000; i < 60_000; i++) {
                cache.put(i, value, Duration.ofSeconds(10));
            }
            for (long i = 60_000; i < 80_000; i++) {
                cache.put(i, value); // seals the pages of the expiring entries
            }
            long usedBefore = cache.memoryUsed();
            now.addAndGet(Duration.ofSeconds(11).toNanos());
            cache.cleanUp();

            long expired = removed.values().stream()
                    .filter(c -> c == RemovalCause.EXPIRED)
                    .count();
            // Pages shared with immortal entries at either end are kept whole.
            assertThat(expired).isGreaterThan(38_000);
            assertThat(removed).doesNotContainKeys(0L, 19_999L, 60_000L, 79_999L);
            assertThat(cache.size()).isEqualTo(80_000 - expired);
            for (long i = 0; i < 80_000; i++) {
                boolean live = i < 20_000 || i >= 60_000;
                assertThat(cache.getIfPresent(i) != null).as("key %d", i).isEqualTo(live);
            }
            // The reclaimed pages are free for new entries: no growth while refilling them.
            for (long i = 100_000; i < 100_000 + expired; i++) {
                cache.put(i, value);
            }
            assertThat(cache.memoryUsed()).isLessThanOrEqualTo(usedBefore + (2L << 20));
        }
    }

    @Test
    void expireAfterAccessKeepsReadEntriesAlive() {
        AtomicLong now = new AtomicLong(0);
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(16L << 20)
                .expireAfterAccess(Duration.ofSeconds(10))
                .ticker(now::get)
                .build()) {
            for (long i = 0; i < 10_000; i++) {
                cache.put(i, new byte[100]);
            }
            for (int step = 0; step < 5; step++) {
                now.addAndGet(Duration.ofSeconds(6).toNanos());
                for (long i = 0; i < 10_000; i += 2) {
                    assertThat(cache.getIfPresent(i))
                            .as("read key %d at step %d", i, step)
                            .isNotNull();
                }
                cache.cleanUp();
            }
            for (long i = 1; i < 10_000; i += 2) {
                assertThat(cache.getIfPresent(i)).as("unread key %d", i).isNull();
            }
            assertThat(cache.size()).isEqualTo(5_000);
        }
    }
}
