package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.LarderCache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A put that appends a record is counted in the frequency sketch by the evictor, when the
 * window's cursor passes the record, and not by the write buffer's drain: each put must count
 * once, whether its record lost its duel, won it, was overwritten first or was read and given a
 * second chance. Measured over groups of keys, as means: the sketch's counters are shared, and
 * one key's estimate can be raised by others.
 */
class PutCountedOnceTest {
    private static final int KEYS = 40;

    @Test
    void eachPutCountsOnceByTheTimeItsRecordsLeaveTheWindow() {
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Long, byte[]> cache = ParkedFullCache.open(parked)) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            assertThat(nc.policy.counting()).isTrue();
            long[] putOnce = uncounted(nc, 5_000_000L);
            long[] putTwice = uncounted(nc, 6_000_000L);
            long[] putAndRead = uncounted(nc, 7_000_000L);
            for (int i = 0; i < KEYS; i++) {
                cache.put(putOnce[i], new byte[] {1}); // an insert
                cache.put(putTwice[i], new byte[] {1}); // an insert, then an append of another length
                cache.put(putTwice[i], new byte[] {1, 2, 3});
                cache.put(putAndRead[i], new byte[] {1}); // an insert, read in the window: a second chance
                assertThat(cache.getIfPresent(putAndRead[i])).isNotNull();
            }
            // Fresh keys until all of them have left the window (by a duel, a move or dead), twice
            // the window's length for the second chances; few enough that the sketch does not age
            // (its sample is 10 x 1,000 additions).
            long window = nc.evictor.windowEntries();
            assertThat(window).isLessThan(2_000);
            for (long k = 10_000_000L; k < 10_000_000L + 2 * window + 50; k++) {
                cache.put(k, new byte[] {1});
            }
            cache.cleanUp();

            assertThat(meanFrequency(nc, putOnce)).as("keys put once").isBetween(0.9, 1.5);
            assertThat(meanFrequency(nc, putTwice)).as("keys put twice").isBetween(1.8, 2.5);
            assertThat(meanFrequency(nc, putAndRead))
                    .as("keys put and read once")
                    .isBetween(1.8, 2.5);
        }
    }

    /** {@link #KEYS} keys from {@code from} on that the sketch has not counted yet. */
    private static long[] uncounted(NativeCache<?, ?> nc, long from) {
        long[] keys = new long[KEYS];
        long k = from;
        for (int i = 0; i < KEYS; i++, k++) {
            while (frequency(nc, k) != 0) {
                k++;
            }
            keys[i] = k;
        }
        return keys;
    }

    private static double meanFrequency(NativeCache<?, ?> nc, long[] keys) {
        long sum = 0;
        for (long k : keys) {
            sum += frequency(nc, k);
        }
        return (double) sum / keys.length;
    }

    private static int frequency(NativeCache<?, ?> nc, long key) {
        return nc.policy.frequency(TestKeys.hashOfLong(nc, key));
    }
}
