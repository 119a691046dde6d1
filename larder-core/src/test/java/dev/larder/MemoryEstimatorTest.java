package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MemoryEstimatorTest {

    @ParameterizedTest
    @CsvSource({
        "200000, 16, 256",
        "200000, 16, 32",
        "50000, 40, 1000",
        "2000, 16, 100000",
        "10000, 8, 256",
        "10000, 16, 1024",
        "5000, 16, 600",
        "3000, 16, 3000"
    })
    void aCacheSizedByTheEstimateHoldsTheEntriesAndUsesAboutThatMuch(int entries, int keyBytes, int valueBytes) {
        MemoryEstimator.MemoryEstimate estimate = MemoryEstimator.estimate(entries, keyBytes, valueBytes);
        byte[] value = new byte[valueBytes];
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(estimate.recommendedMaximumBytes())
                .expectedEntries(entries)
                .build()) {
            for (long i = 0; i < entries; i++) {
                cache.put(i, value);
            }
            // 8-byte long keys stand in for keyBytes-long keys: correct the record bytes.
            long keyCorrection = (long) entries * (keyBytes - 8);
            assertThat(cache.size()).as("nothing evicted").isEqualTo(entries);
            double predicted = estimate.totalBytes() - keyCorrection;
            // Up to 1% over: when maintenance frees its batch of pages is a matter of timing, and
            // a small cache of large values has few, large pages (3,000 of 3 KB: 32 KiB pages,
            // a page is 0.3% of the total).
            assertThat((double) cache.memoryUsed()).isBetween(0.85 * predicted, 1.01 * estimate.totalBytes());
            // Overwriting every entry twice more stays within the recommended budget without
            // evicting: compaction reclaims the dead records.
            for (int round = 0; round < 2; round++) {
                for (long i = 0; i < entries; i++) {
                    cache.put(i, value);
                }
            }
            assertThat(cache.size()).as("nothing evicted by overwrites").isEqualTo(entries);
        }
    }

    @Test
    void reportsTheIndexShareAndBytesPerEntry() {
        var e = MemoryEstimator.estimate(1_000_000, 16, 256);
        assertThat(e.bytesPerEntry()).isBetween(280.0, 300.0);
        assertThat(e.indexShare()).isBetween(0.03, 0.05);
        var small = MemoryEstimator.estimate(1_000_000, 16, 32);
        assertThat(small.bytesPerEntry()).isBetween(55.0, 68.0);
        assertThat(small.sketchBytes()).as("the sketch: 3 bytes per entry").isBetween(2_999_000L, 3_000_000L);
    }

    @Test
    void valuesThatChangeLengthGetAboutAThirdMoreRoom() {
        for (long entries : new long[] {10_000, 1_000_000, 100_000_000}) {
            var e = MemoryEstimator.estimate(entries, 16, 256);
            double ratio = (double) e.recommendedMaximumBytesForChangingLengths() / e.recommendedMaximumBytes();
            assertThat(ratio).as("%d entries", entries).isBetween(1.3, 1.45);
            // The padding's room: the live records fill under 55% of the pages before any padding.
            assertThat((double) e.recordBytes() / (e.recordBytes() + e.changingLengthsHeadroomBytes()))
                    .isLessThan(0.56);
        }
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> MemoryEstimator.estimate(0, 16, 256)).hasMessageContaining("entries");
        assertThatThrownBy(() -> MemoryEstimator.estimate(1, 0, 256)).hasMessageContaining("averageKeyBytes");
        assertThatThrownBy(() -> MemoryEstimator.estimate(1, 16, -1)).hasMessageContaining("averageValueBytes");
    }
}
