package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A writer past the bound wakes the executor while a wake costs it less than the batches it buys. */
class HandOffCostsTest {
    @Test
    void untilEachCostWasMeasuredTheWriterWakesTheExecutor() {
        HandOffCosts costs = new HandOffCosts();
        assertThat(costs.wakePays()).isTrue();
        costs.batchRan(3_000);
        assertThat(costs.wakePays()).isTrue();
        costs.woke(75_000);
        assertThat(costs.wakePays()).isTrue(); // no task has told how many batches a wake buys
        costs.taskEnded(1);
        assertThat(costs.wakePays()).isFalse();
    }

    @Test
    void aWakeThatBuysManyBatchesPaysWhereOneThatBuysOneDoesNot() {
        assertThat(measured(3_000, 75_000, 64).wakePays()).isTrue(); // 192 µs of batches for a 75 µs wake
        assertThat(measured(3_000, 75_000, 2).wakePays()).isFalse(); // 6 µs of batches for the same wake
    }

    @Test
    void aBatchDearerThanAWakePaysForItAlone() {
        assertThat(measured(80_000, 75_000, 1).wakePays()).isTrue();
    }

    @Test
    void aWriterThatDeclinesWakesStillWakesOncePerProbePeriod() {
        HandOffCosts costs = declining();
        int wakes = 0;
        for (int i = 0; i < 10 * HandOffCosts.PROBE_EVERY; i++) {
            wakes += costs.wakePays() ? 1 : 0;
        }
        assertThat(wakes).isEqualTo(10);
    }

    @Test
    void theFiguresFollowTheirLatestSamples() {
        HandOffCosts costs = declining();
        // The JIT done and the writer faster: cheaper wakes, tasks that serve many batches.
        for (int i = 0; i < 64; i++) {
            costs.woke(20_000);
            costs.taskEnded(64);
        }
        assertThat(costs.wakePays()).isTrue();
        // And back: wakes that preempt the writer, tasks that time out after a batch.
        for (int i = 0; i < 64; i++) {
            costs.woke(75_000);
            costs.taskEnded(1);
        }
        assertThat(costs.wakePays()).isFalse();
    }

    /** Costs under which a wake does not pay: 75 µs for one batch of 3 µs. */
    private static HandOffCosts declining() {
        HandOffCosts costs = measured(3_000, 75_000, 1);
        assertThat(costs.wakePays()).isFalse();
        return costs;
    }

    /** Costs with one sample of each figure. */
    private static HandOffCosts measured(long batchNanos, long wakeNanos, int batchesPerTask) {
        HandOffCosts costs = new HandOffCosts();
        costs.batchRan(batchNanos);
        costs.woke(wakeNanos);
        costs.taskEnded(batchesPerTask);
        return costs;
    }
}
