package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.LarderCache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Readers drain the access buffers themselves, in small drains: with an executor that never runs
 * and no writes, a reader never leaves more than one small drain's worth of reads pending (a
 * large drain is a long wait for the one read that runs it: the p99.9 of a GET), and what it
 * drains still reaches the frequency sketch.
 */
class ReaderDrainTest {
    /** The most reads a reader may leave pending (NativeCache.DRAIN_EVERY). */
    private static final int SMALL_DRAIN = 64;

    @Test
    void aReaderAloneDrainsEverySixtyFourReads() {
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Long, byte[]> cache = ParkedFullCache.open(parked)) {
            NativeCache<?, ?> nativeCache = (NativeCache<?, ?>) cache;
            assertThat(nativeCache.policy.counting()).isTrue();
            int parkedBefore = parked.size();
            long maxPending = 0;
            for (int i = 0; i < 5_000; i++) {
                assertThat(cache.getIfPresent((long) (i % 1_000))).isNotNull();
                maxPending = Math.max(maxPending, nativeCache.pendingReads());
            }
            assertThat(maxPending).as("reads left pending by a reader").isLessThan(SMALL_DRAIN);
            assertThat(maxPending)
                    .as("reads are drained in batches, not one by one")
                    .isGreaterThan(SMALL_DRAIN / 2);
            assertThat(parked).as("tasks handed to the executor by reads").hasSize(parkedBefore);
            // Five reads of every key, drained by the reader itself: each key now leads a key
            // that was never read in the sketch.
            assertThat(nativeCache.policy.admit(
                            TestKeys.hashOfLong(nativeCache, 7L), TestKeys.hashOfLong(nativeCache, 5_000L)))
                    .isTrue();
        }
    }
}
