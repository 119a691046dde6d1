package dev.larder.simulator.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ZipfGeneratorTest {
    private static final int SAMPLES = 400_000;

    /** The exact probability of rank k: k^-s / sum_j j^-s. */
    private static double probability(long n, double s, long k) {
        double norm = 0;
        for (long j = 1; j <= n; j++) {
            norm += Math.pow(j, -s);
        }
        return Math.pow(k, -s) / norm;
    }

    @ParameterizedTest
    @CsvSource({"10000, 0.99", "10000, 0.8", "10000, 1.2", "1000, 1.0", "100, 0.0", "1, 0.99"})
    void topRanksFollowTheLaw(long n, double s) {
        ZipfGenerator zipf = new ZipfGenerator(n, s);
        SplittableRandom random = new SplittableRandom(42);
        int[] counts = new int[11];
        for (int i = 0; i < SAMPLES; i++) {
            long k = zipf.next(random);
            assertThat(k).isBetween(1L, n);
            if (k <= 10) {
                counts[(int) k]++;
            }
        }
        for (int k = 1; k <= Math.min(10, n); k++) {
            double p = probability(n, s, k);
            double sigma = Math.sqrt(p * (1 - p) / SAMPLES);
            assertThat((double) counts[k] / SAMPLES)
                    .as("rank %d of Zipf(%s) over %d", k, s, n)
                    .isCloseTo(p, within(5 * sigma + 1e-4));
        }
    }

    @Test
    void rankOneFrequencyForS099() {
        // Rank 1 of Zipf(0.99) over 10,000 keys: about 9.8% of the draws.
        long n = 10_000;
        double expected = probability(n, 0.99, 1);
        assertThat(expected).isCloseTo(0.0978, within(0.0005));
        ZipfGenerator zipf = new ZipfGenerator(n, 0.99);
        SplittableRandom random = new SplittableRandom(7);
        int ones = 0;
        for (int i = 0; i < SAMPLES; i++) {
            if (zipf.next(random) == 1) {
                ones++;
            }
        }
        assertThat((double) ones / SAMPLES).isCloseTo(expected, within(0.003));
    }

    @Test
    void sameSeedSameSequence() {
        long[] a = SyntheticWorkloads.zipf(0.99, 10_000, 1_000, 3);
        long[] b = SyntheticWorkloads.zipf(0.99, 10_000, 1_000, 3);
        assertThat(a).isEqualTo(b);
        assertThat(SyntheticWorkloads.zipf(0.99, 10_000, 1_000, 4)).isNotEqualTo(a);
    }

    @Test
    void helpersAreContinuousAtZero() {
        assertThat(ZipfGenerator.log1pOverX(1e-9)).isCloseTo(1 - 5e-10, within(1e-15));
        assertThat(ZipfGenerator.expm1OverX(-1e-9)).isCloseTo(1 - 5e-10, within(1e-15));
        // No jump where the series hands over to the library functions: both sides follow 1 -+ x/2.
        for (double x : new double[] {0.999e-8, 1.001e-8}) {
            assertThat(ZipfGenerator.log1pOverX(x)).isCloseTo(1 - x / 2, within(1e-13));
            assertThat(ZipfGenerator.expm1OverX(x)).isCloseTo(1 + x / 2, within(1e-13));
        }
        assertThat(ZipfGenerator.log1pOverX(0)).isEqualTo(1.0);
        assertThat(ZipfGenerator.expm1OverX(0)).isEqualTo(1.0);
    }
}
