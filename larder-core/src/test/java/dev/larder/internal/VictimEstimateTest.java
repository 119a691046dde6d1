package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.LarderCache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The evictor keeps main's victim's hash and frequency estimate from one duel to the next
 * (Evictor's victim memo). The estimate must be taken afresh once the sketch has counted more
 * accesses: a victim whose key grew popular between two passes must not be judged by its old
 * count.
 */
class VictimEstimateTest {
    /** Main's oldest keys, which grow popular between two passes. */
    private static final int POPULAR = 50;

    @Test
    void aVictimThatGrewPopularBetweenTwoPassesIsJudgedByItsNewCount() {
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Long, byte[]> cache = ParkedFullCache.open(parked)) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            assertThat(nc.policy.counting()).isTrue();
            // Main's keys are the oldest ones; the window holds the rest (more than its target:
            // it grew while the cache filled), each of them a candidate before any newcomer.
            long window = nc.evictor.windowEntries();
            int mainKeys = (int) (ParkedFullCache.ENTRIES - window - 1);
            assertThat(mainKeys).isGreaterThan(ParkedFullCache.ENTRIES / 2);
            // Key 0 seen once more: the window's oldest, whose put is counted when it becomes a
            // candidate, then cannot lead it by one, which would let it in at random.
            nc.policy.record(TestKeys.hashOfLong(nc, 0));
            assertThat(frequency(nc, 0))
                    .as("the oldest key's count before it grew popular")
                    .isBetween(1, 2);

            // A duel against the oldest main record (key 0): the window's oldest loses, and the
            // evictor has the victim's estimate, low.
            cache.put(-1L, new byte[] {1});
            assertThat(cache.size()).isLessThanOrEqualTo(ParkedFullCache.ENTRIES);
            assertThat(cache.containsKey(0L)).isTrue();

            // Main's oldest keys grow popular (counted in the sketch, as drained reads would be,
            // without marking the records read: no second chance hides the duel). Few enough that
            // no window record shares all its counters with them and turns warm, which would let
            // it in at random too; the duels below meet only the first two or three.
            for (long k = 0; k < POPULAR; k++) {
                long hash = TestKeys.hashOfLong(nc, k);
                for (int i = 0; i < 6; i++) {
                    nc.policy.record(hash);
                }
            }
            assertThat(frequency(nc, 0)).isGreaterThanOrEqualTo(6);

            // New keys counted three times before their insert (whose write makes four): more
            // than the victim's old count by two or more, so they would win against it for sure;
            // less than its new count, and under WindowTinyLfu.WARM, so they must all lose. The
            // window's records meet the victim first, then 40 of the newcomers do.
            int inserted = 0;
            for (long k = 1_000_000; inserted < window + 40; k++) {
                long hash = TestKeys.hashOfLong(nc, k);
                if (nc.policy.frequency(hash) != 0) {
                    continue; // shares all its counters with popular keys: not a clean newcomer
                }
                for (int i = 0; i < 3; i++) {
                    nc.policy.record(hash);
                }
                if (nc.policy.frequency(hash) != 3) {
                    continue;
                }
                cache.put(k, new byte[] {1});
                inserted++;
            }
            for (long k = 0; k < POPULAR; k++) {
                assertThat(cache.containsKey(k))
                        .as("popular key %d, displaced by a newcomer judged against its old count", k)
                        .isTrue();
            }
        }
    }

    private static int frequency(NativeCache<?, ?> nc, long key) {
        return nc.policy.frequency(TestKeys.hashOfLong(nc, key));
    }
}
