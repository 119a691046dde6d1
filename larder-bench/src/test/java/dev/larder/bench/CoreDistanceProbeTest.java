package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CoreDistanceProbeTest {
    @Test
    void measuresACrossingInNanoseconds() throws InterruptedException {
        double ns = CoreDistanceProbe.medianCrossingNanos(2_000, 3, CoreDistanceProbe.RUN_LIMIT_NANOS);
        // A line handed between two threads: more than a nanosecond, far less than the 200 ms run
        // (on one core each crossing waits for a time slice, still well under a second).
        assertThat(ns).isGreaterThan(1.0).isLessThan(100_000_000.0);
    }

    @Test
    void aRunStopsAtItsTimeLimit() throws InterruptedException {
        long start = System.nanoTime();
        double ns = CoreDistanceProbe.crossingNanos(
                Integer.MAX_VALUE, Duration.ofMillis(50).toNanos());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(ns).isGreaterThan(1.0);
    }

    @Test
    void rejectsNoRoundsAndNoRuns() {
        assertThatThrownBy(() -> CoreDistanceProbe.crossingNanos(0, 1_000_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rounds");
        assertThatThrownBy(() -> CoreDistanceProbe.medianCrossingNanos(10, 0, 1_000_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("runs");
    }
}
