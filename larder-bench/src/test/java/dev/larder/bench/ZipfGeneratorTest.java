package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ZipfGeneratorTest {
    @Test
    void frequenciesMatchTheDistribution() {
        for (double s : new double[] {0.5, 0.99, 1.0, 1.3}) {
            int n = 1000;
            ZipfGenerator zipf = new ZipfGenerator(n, s);
            SplittableRandom random = new SplittableRandom(1);
            int draws = 400_000;
            long[] counts = new long[n + 1];
            for (int i = 0; i < draws; i++) {
                long k = zipf.next(random);
                assertThat(k).isBetween(1L, (long) n);
                counts[(int) k]++;
            }
            for (int k : new int[] {1, 2, 3, 10, 100}) {
                double expected = zipf.probability(k) * draws;
                // within 5 standard deviations of a binomial count
                double sigma = Math.sqrt(expected * (1 - zipf.probability(k)));
                assertThat((double) counts[k])
                        .as("rank %d at exponent %s", k, s)
                        .isCloseTo(expected, org.assertj.core.data.Offset.offset(5 * sigma + 1));
            }
        }
    }

    @Test
    void singleRankAndLargeUniverses() {
        SplittableRandom random = new SplittableRandom(2);
        assertThat(new ZipfGenerator(1, 0.99).next(random)).isEqualTo(1);
        ZipfGenerator big = new ZipfGenerator(10_000_000_000L, 0.99);
        for (int i = 0; i < 10_000; i++) {
            assertThat(big.next(random)).isBetween(1L, 10_000_000_000L);
        }
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> new ZipfGenerator(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ZipfGenerator(10, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
