package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TailStatsTest {
    @Test
    void aPeriodicSlowCallIsFoundAtItsPosition() {
        long[] latencies = new long[256 * 100];
        Arrays.fill(latencies, 100);
        for (int i = 255; i < latencies.length; i += 256) {
            latencies[i] = 10_000;
        }
        latencies[7] = 5_000; // one hiccup elsewhere
        TailStats s = TailStats.of(latencies, 2_000, 256);
        assertThat(s.slow()).isEqualTo(101);
        assertThat(s.busiestPosition()).isEqualTo(255);
        assertThat(s.slowAtBusiestPosition()).isEqualTo(100);
        assertThat(s.slowShare()).isEqualTo(101.0 / latencies.length);
        double total = (latencies.length - 101) * 100.0 + 100 * 10_000.0 + 5_000;
        assertThat(s.mean()).isEqualTo(total / latencies.length);
        assertThat(s.slowTimeShare()).isEqualTo((100 * 10_000.0 + 5_000) / total);
        assertThat(s.p50()).isEqualTo(100);
        assertThat(s.p999()).isEqualTo(10_000);
    }

    @Test
    void percentilesAreNearestRank() {
        long[] latencies = new long[1000];
        for (int i = 0; i < latencies.length; i++) {
            latencies[i] = i + 1;
        }
        Random random = new Random(1); // unsorted input: the statistics must sort a copy
        for (int i = latencies.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            long t = latencies[i];
            latencies[i] = latencies[j];
            latencies[j] = t;
        }
        long first = latencies[0];
        TailStats s = TailStats.of(latencies, 2_000, 1);
        assertThat(s.p50()).isEqualTo(500);
        assertThat(s.p90()).isEqualTo(900);
        assertThat(s.p99()).isEqualTo(990);
        assertThat(s.p999()).isEqualTo(999);
        assertThat(s.slow()).isZero();
        assertThat(s.slowTimeShare()).isZero();
        assertThat(s.mean()).isEqualTo(500.5);
        assertThat(latencies[0]).isEqualTo(first); // the caller's array is left as it was
    }

    @Test
    void rejectsNoLatenciesAndABadPeriod() {
        assertThatThrownBy(() -> TailStats.of(new long[0], 1, 1)).hasMessageContaining("no latencies");
        assertThatThrownBy(() -> TailStats.of(new long[] {1}, 1, 0)).hasMessageContaining("period");
    }
}
