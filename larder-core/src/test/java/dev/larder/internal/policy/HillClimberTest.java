package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.function.DoubleUnaryOperator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** Unit tests of the window-size hill climber, driven by synthetic hit-rate curves. */
class HillClimberTest {

    /**
     * Feeds a climber periods of requests whose hit rate is a function of its window share, and
     * the ghost lists' cumulative hits.
     */
    private static final class Workload {
        final HillClimber climber;
        long hits;
        long misses;
        long windowGhosts;
        long mainGhosts;

        Workload(HillClimber climber) {
            this.climber = climber;
        }

        /** One sample period at the hit rate {@code curve} gives for the current share. */
        boolean period(DoubleUnaryOperator curve) {
            long requests = climber.samplePeriod();
            long periodHits = Math.round(curve.applyAsDouble(climber.windowFraction()) * requests);
            hits += periodHits;
            misses += requests - periodHits;
            return climber.record(hits, misses);
        }

        /** Runs {@code periods} periods; returns the least and greatest share of the last 50. */
        double[] run(DoubleUnaryOperator curve, int periods) {
            double low = Double.MAX_VALUE;
            double high = -Double.MAX_VALUE;
            for (int i = 0; i < periods; i++) {
                period(curve);
                double f = climber.windowFraction();
                assertThat(f).isBetween(HillClimber.MIN_FRACTION, HillClimber.MAX_FRACTION);
                if (i >= periods - 50) {
                    low = Math.min(low, f);
                    high = Math.max(high, f);
                }
            }
            return new double[] {low, high};
        }
    }

    /**
     * A hit rate with one maximum, 0.7 at {@code best}, half a point lower per point of share
     * away from it (so a step of 0.06 changes it by more than a period's sampling noise); stays in
     * [0.3, 0.7] for best in [0, 0.8].
     */
    private static DoubleUnaryOperator peakAt(double best) {
        return f -> 0.7 - 0.5 * Math.abs(f - best);
    }

    @Test
    void startsAtOnePercentWithTheDocumentedSamplePeriod() {
        assertThat(new HillClimber(1000).windowFraction()).isEqualTo(0.01);
        assertThat(new HillClimber(1000).samplePeriod()).isEqualTo(10_000);
        assertThat(new HillClimber(10).samplePeriod()).isEqualTo(1_000);
        assertThat(new HillClimber(0).samplePeriod()).isEqualTo(1_000);
        assertThat(new HillClimber(Long.MAX_VALUE).samplePeriod()).isPositive();
        assertThatThrownBy(() -> new HillClimber(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity");
    }

    @Test
    void noChangeBeforeAFullSamplePeriod() {
        HillClimber climber = new HillClimber(1000);
        long period = climber.samplePeriod();
        // Called often with cumulative counts, as by the maintenance thread.
        for (long requests = 0; requests < period; requests += 100) {
            assertThat(climber.record(requests / 2, requests - requests / 2)).isFalse();
        }
        assertThat(climber.record(period / 2, period - period / 2 - 1)).isFalse();
        assertThat(climber.windowFraction()).isEqualTo(0.01);
        assertThat(climber.record(period / 2, period - period / 2)).isTrue();
        assertThat(climber.windowFraction()).isEqualTo(0.0); // down, to the bound
        // The next period counts from this adjustment; its hit rate is worse, so it turns up.
        long hits = period / 2 + period / 4;
        long misses = period - period / 2 + period - period / 4;
        assertThat(climber.record(hits, misses - 1)).isFalse();
        assertThat(climber.record(hits, misses)).isTrue();
        assertThat(climber.windowFraction()).isGreaterThan(0.0);
    }

    @Test
    void aPeriodLongerThanOneStillMakesOneStep() {
        HillClimber climber = new HillClimber(1000);
        assertThat(climber.record(50_000, 50_000)).isTrue();
        assertThat(climber.windowFraction()).isEqualTo(0.0); // one step down, to the bound
    }

    @Test
    void keepsGoingWhileItImprovesAndTurnsBackWhenItGetsWorse() {
        HillClimber climber = new HillClimber(1000);
        Workload w = new Workload(climber);
        w.period(f -> 0.5); // first period: down by 0.0625, to the bound
        assertThat(climber.windowFraction()).isEqualTo(0.0);
        w.period(f -> 0.49); // worse: turn back up, by 0.0625 × 0.98
        assertThat(climber.windowFraction()).isCloseTo(0.06125, within(1e-12));
        w.period(f -> 0.50); // better: up again, by 0.0625 × 0.98²
        assertThat(climber.windowFraction()).isCloseTo(0.06125 + 0.060025, within(1e-12));
        w.period(f -> 0.51); // better: keep going up
        assertThat(climber.windowFraction()).isCloseTo(0.06125 + 0.060025 + 0.0588245, within(1e-9));
        w.period(f -> 0.50); // worse: back down
        assertThat(climber.windowFraction()).isCloseTo(0.06125 + 0.060025 + 0.0588245 - 0.05764801, within(1e-9));
    }

    @Test
    void aChangeWithinTheSamplingNoiseMovesNothing() {
        HillClimber climber = new HillClimber(1000); // 10,000 requests a period
        Workload w = new Workload(climber);
        w.period(f -> 0.5);
        w.period(f -> 0.4); // worse: up
        double settled = climber.windowFraction();
        // One standard error at 50% over 10,000 requests is 0.5 points: 0.3 points is noise.
        for (int i = 0; i < 20; i++) {
            double rate = i % 2 == 0 ? 0.403 : 0.4;
            assertThat(w.period(f -> rate)).isFalse();
            assertThat(climber.windowFraction()).isEqualTo(settled);
        }
        assertThat(w.period(f -> 0.42)).isTrue(); // 2 points is not
        assertThat(HillClimber.samplingNoise(0.5, 0.5, 10_000)).isCloseTo(0.005, within(1e-12));
        assertThat(HillClimber.samplingNoise(0.0, 0.0, 10_000)).isCloseTo(0.001, within(1e-12));
    }

    @Test
    void aClimberPushingAgainstABoundStepsBackFromIt() {
        HillClimber climber = new HillClimber(1000);
        Workload w = new Workload(climber);
        w.period(f -> 0.5); // first period: down to the bound
        assertThat(climber.windowFraction()).isEqualTo(0.0);
        w.period(f -> 0.52); // better, but it cannot go lower: it tries the other way
        assertThat(climber.windowFraction()).isCloseTo(0.06125, within(1e-12));
        w.period(f -> 0.50); // worse: back down, to just above the bound (the step decayed)
        assertThat(climber.windowFraction()).isLessThan(0.01);
        // It stepped back once and that did not pay: while the hit rate keeps improving by less
        // than 5 points a period (the same workload), it keeps to the bound.
        for (int i = 1; i <= 20; i++) {
            double rate = 0.50 + 0.02 * i;
            w.period(f -> rate);
            assertThat(climber.windowFraction()).as("period %d", i).isEqualTo(0.0);
        }
        w.period(f -> 0.40); // a change of more than 5 points: a new workload, worth one more try
        assertThat(climber.windowFraction()).isGreaterThan(0.0);
    }

    @Test
    void convergesNearASinglePeak() {
        for (double best : new double[] {0.1, 0.3, 0.5}) {
            Workload w = new Workload(new HillClimber(1000));
            double[] range = w.run(peakAt(best), 400);
            assertThat(range[0]).as("peak at %s", best).isCloseTo(best, within(0.05));
            assertThat(range[1]).as("peak at %s", best).isCloseTo(best, within(0.05));
        }
    }

    @Test
    void aPeakAtZeroDrivesTheWindowToTheLowerBound() {
        Workload w = new Workload(new HillClimber(1000));
        double[] range = w.run(peakAt(0.0), 200);
        assertThat(range[0]).isEqualTo(0.0);
        assertThat(range[1]).isEqualTo(0.0);
        // At the bound a step outward changes nothing.
        assertThat(w.period(peakAt(0.0))).isFalse();
    }

    @Test
    void aPeakBeyondTheUpperBoundStopsAtIt() {
        Workload w = new Workload(new HillClimber(1000));
        double[] range = w.run(f -> 0.3 + 0.5 * f, 200); // best at 1.0, past the bound
        assertThat(range[0]).isEqualTo(0.8);
        assertThat(range[1]).isEqualTo(0.8);
    }

    @Test
    void readaptsWhenTheWorkloadChanges() {
        Workload w = new Workload(new HillClimber(1000));
        double[] settled = w.run(peakAt(0.05), 400);
        assertThat(settled[0]).isCloseTo(0.05, within(0.05));
        assertThat(settled[1]).isCloseTo(0.05, within(0.05));
        // By now the step has decayed to almost nothing (0.0625 × 0.98^400 ≈ 2e-5); only the
        // restart lets the climber cross to the new peak in a few dozen periods.
        double[] moved = w.run(peakAt(0.6), 100);
        assertThat(moved[0]).isCloseTo(0.6, within(0.05));
        assertThat(moved[1]).isCloseTo(0.6, within(0.05));
    }

    @Test
    void onlyAChangeOfMoreThanFivePointsRestartsTheStep() {
        Workload w = new Workload(new HillClimber(1000));
        DoubleUnaryOperator curve = peakAt(0.3);
        w.run(curve, 400); // settled: the step has decayed to almost nothing
        double before = w.climber.windowFraction();
        w.period(f -> curve.applyAsDouble(f) + 0.03); // 3 points better: no restart
        double afterSmall = w.climber.windowFraction();
        assertThat(afterSmall).isCloseTo(before, within(0.001));
        w.period(f -> curve.applyAsDouble(f) + 0.10); // 7 points better: restart at 6.25%
        assertThat(w.climber.windowFraction()).isCloseTo(afterSmall, within(0.0626));
        assertThat(Math.abs(w.climber.windowFraction() - afterSmall)).isGreaterThan(0.062);
    }

    @Test
    void countersThatGoBackwardsStartANewPeriod() {
        HillClimber climber = new HillClimber(1000);
        assertThat(climber.record(9_000, 0)).isFalse();
        assertThat(climber.record(0, 0)).isFalse(); // statistics reset
        assertThat(climber.record(9_999, 0)).isFalse();
        assertThat(climber.windowFraction()).isEqualTo(0.01);
        assertThat(climber.record(10_000, 0)).isTrue();
    }

    /** Three periods that leave the climber at 0.121275, going up; the next is the test's. */
    private static Workload climbing() {
        Workload w = new Workload(new HillClimber(1000));
        w.period(f -> 0.5); // down to the bound
        w.period(f -> 0.49); // worse: up by 0.06125
        w.period(f -> 0.50); // better: up by 0.060025
        assertThat(w.climber.windowFraction()).isCloseTo(0.121275, within(1e-12));
        return w;
    }

    /** One period at {@code hitRate} with these ghost hits in it. */
    private static boolean periodWithGhosts(Workload w, double hitRate, long windowGhosts, long mainGhosts) {
        w.windowGhosts += windowGhosts;
        w.mainGhosts += mainGhosts;
        long requests = w.climber.samplePeriod();
        long periodHits = Math.round(hitRate * requests);
        w.hits += periodHits;
        w.misses += requests - periodHits;
        return w.climber.record(w.hits, w.misses, w.windowGhosts, w.mainGhosts);
    }

    @Test
    void onAHitRateJumpMainGhostsThatLeadShrinkTheWindow() {
        Workload w = climbing();
        // 10 points better: the hit rate alone would keep climbing, by a restarted 6.25%. Main's
        // evicted keys came back three times as often as the window's: the window shrinks.
        assertThat(periodWithGhosts(w, 0.60, 100, 300)).isTrue();
        assertThat(w.climber.windowFraction()).isCloseTo(0.121275 - 0.0625, within(1e-12));
        // The next step goes on down (to the bound) if the hit rate does not get worse.
        periodWithGhosts(w, 0.61, 0, 0);
        assertThat(w.climber.windowFraction()).isEqualTo(0.0);
    }

    @Test
    void onAHitRateJumpAWindowGhostLeadLeavesTheHitRateInCharge() {
        Workload w = climbing();
        // The window's count runs high whatever the window is worth: it does not push the
        // window up, the hit rate's direction (better: keep climbing) stands.
        assertThat(periodWithGhosts(w, 0.60, 300, 100)).isTrue();
        assertThat(w.climber.windowFraction()).isCloseTo(0.121275 + 0.0625, within(1e-12));
    }

    @Test
    void aMainLeadWithinItsNoiseOrWithoutAJumpLeavesTheHitRateInCharge() {
        Workload noise = climbing();
        periodWithGhosts(noise, 0.60, 100, 110); // √210 ≈ 14.5 > 10: noise
        assertThat(noise.climber.windowFraction()).isCloseTo(0.121275 + 0.0625, within(1e-12));

        Workload noJump = climbing();
        periodWithGhosts(noJump, 0.52, 100, 300); // 2 points: the hit rate's comparison holds
        assertThat(noJump.climber.windowFraction()).isCloseTo(0.121275 + 0.0588245, within(1e-12));

        assertThat(HillClimber.mainGhostsLead(100, 300)).isTrue();
        assertThat(HillClimber.mainGhostsLead(100, 110)).isFalse();
        assertThat(HillClimber.mainGhostsLead(300, 100)).isFalse();
        assertThat(HillClimber.mainGhostsLead(0, 2)).isTrue();
        assertThat(HillClimber.mainGhostsLead(0, 1)).isFalse();
        assertThat(HillClimber.mainGhostsLead(0, 0)).isFalse();
    }

    @Test
    void aWorkloadThatJumpsEveryPeriodWithMainGhostsAheadKeepsASmallWindow() {
        // The p2 disk trace's way: the hit rate jumps by 10-20 points every period, either way.
        // On the hit rate alone the window random-walks (up whenever the jump is upward).
        Workload alone = new Workload(new HillClimber(1000));
        Workload ghosts = new Workload(new HillClimber(1000));
        double highestAlone = 0;
        for (int i = 0; i < 40; i++) {
            double rate = i % 3 == 0 ? 0.20 : i % 3 == 1 ? 0.40 : 0.30;
            alone.period(f -> rate);
            highestAlone = Math.max(highestAlone, alone.climber.windowFraction());
            periodWithGhosts(ghosts, rate, 200, 400);
            assertThat(ghosts.climber.windowFraction()).as("period %d", i).isLessThanOrEqualTo(0.01);
        }
        assertThat(highestAlone).isGreaterThan(0.1);
        assertThat(ghosts.climber.windowFraction()).isEqualTo(0.0);
    }

    @Test
    void ghostCountsThatGoBackwardsStartANewPeriod() {
        HillClimber climber = new HillClimber(1000);
        assertThat(climber.record(5_000, 5_000, 20, 20)).isTrue(); // first period: down to 0
        assertThat(climber.record(9_000, 11_000, 10, 20)).isFalse(); // ghosts reset: a new period
        assertThat(climber.record(11_000, 18_999, 10, 20)).isFalse(); // one request short of it
        // A whole period from the reset: 20% against 50%, worse, so it turns up.
        assertThat(climber.record(11_000, 19_000, 10, 20)).isTrue();
        assertThat(climber.windowFraction()).isCloseTo(0.0625, within(1e-12));
    }

    @Property(tries = 300)
    void staysWithinBounds(
            @ForAll @IntRange(max = 100_000) int capacity,
            @ForAll @Size(max = 300) List<@DoubleRange(min = 0.0, max = 1.0) Double> hitRates) {
        Workload w = new Workload(new HillClimber(capacity));
        for (double rate : hitRates) {
            double before = w.climber.windowFraction();
            boolean changed = w.period(f -> rate);
            double after = w.climber.windowFraction();
            assertThat(after).isBetween(0.0, 0.8);
            assertThat(changed).isEqualTo(after != before);
        }
    }

    @Property(tries = 300)
    void staysWithinBoundsWithGhosts(
            @ForAll @IntRange(max = 100_000) int capacity,
            @ForAll @Size(max = 300) List<@DoubleRange(min = 0.0, max = 1.0) Double> hitRates,
            @ForAll @IntRange(max = 1_000) int windowGhosts,
            @ForAll @IntRange(max = 1_000) int mainGhosts) {
        Workload w = new Workload(new HillClimber(capacity));
        int i = 0;
        for (double rate : hitRates) {
            double before = w.climber.windowFraction();
            // Ghost counts that vary from period to period, either side ahead.
            boolean changed = periodWithGhosts(
                    w, rate, (windowGhosts * (long) (i % 7)) % 1_001, (mainGhosts * (long) (i % 5)) % 1_001);
            double after = w.climber.windowFraction();
            assertThat(after).isBetween(0.0, 0.8);
            assertThat(changed).isEqualTo(after != before);
            i++;
        }
    }
}
