package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * Eviction goes where it makes the writers faster: tried epoch by epoch, on a clock driven here by
 * what each way costs per eviction.
 */
class HandOffTrialsTest {
    /** Evictions per maintenance pass in these runs (a batch). */
    private static final int BATCH = 32;

    private static final long EPOCH = HandOffTrials.SETTLE_EVICTIONS + HandOffTrials.EPOCH_EVICTIONS;

    /** Drives one {@link HandOffTrials} pass by pass; counts the passes run each way. */
    private static final class Run {
        final HandOffTrials trials = new HandOffTrials();
        long now = 1_000;
        long evictions;
        long handedOff;
        long onWriters;

        /** Runs about {@code epochs} epochs, each eviction costing what {@code nanos} says for the way in force. */
        Run epochs(int epochs, ToLongFunction<Boolean> nanos) {
            for (long i = 0; i < epochs * EPOCH / BATCH; i++) {
                boolean handOff = trials.handOff();
                now += BATCH * nanos.applyAsLong(handOff);
                evictions += BATCH;
                if (handOff) {
                    handedOff++;
                } else {
                    onWriters++;
                }
                trials.passEnded(now, evictions, true);
            }
            return this;
        }

        boolean usesHandOff() {
            return trials.usesHandOff();
        }
    }

    private static ToLongFunction<Boolean> costs(long handedOff, long onWriters) {
        return handOff -> handOff ? handedOff : onWriters;
    }

    @Test
    void evictionIsHandedOffUntilATrialSaysOtherwise() {
        HandOffTrials trials = new HandOffTrials();
        assertThat(trials.handOff()).isTrue();
        assertThat(trials.wakeAnyway()).isFalse();
    }

    @Test
    void whereTheWritersEvictFasterTheyTakeTheBatchesAfterTwoTrialsWon() {
        // The distant-cores case measured: 340 ns per insert handed off, 195 on the writer.
        Run run = new Run();
        run.epochs(HandOffTrials.TRIAL_EVERY - 1, costs(340, 195));
        assertThat(run.onWriters).isZero(); // no trial yet
        run.epochs(3, costs(340, 195)); // the first trial, won
        assertThat(run.onWriters).isPositive();
        assertThat(run.trials.handOff()).isTrue(); // one win is not enough
        run.epochs(HandOffTrials.TRIAL_EVERY + 4, costs(340, 195)); // the second
        assertThat(run.usesHandOff()).isFalse();
        assertThat(run.trials.wakeAnyway()).isFalse();
    }

    @Test
    void whereBothWaysCostTheSameTheHandOffStaysAndTrialsGrowRare() {
        Run run = new Run();
        Random noise = new Random(7);
        run.epochs(2_000, handOff -> 190 + noise.nextInt(20)); // within 10%: never a win
        assertThat(run.usesHandOff()).isTrue();
        long trialPasses = run.onWriters;
        long passesPerEpoch = EPOCH / BATCH;
        // Trials after 16, 32, then every 64 epochs: ~32 in 2,000, each ended after its settling
        // and an eighth of an epoch (~0.19 of an epoch): ~6 epochs on the writers, not 2,000 / 17.
        long trialEpochs = HandOffTrials.SETTLE_EVICTIONS + HandOffTrials.EARLY_EVICTIONS;
        assertThat(trialPasses).isBetween(24 * trialEpochs / BATCH, 44 * trialEpochs / BATCH);
    }

    @Test
    void aTrialThatIsNotWinningEndsAfterAnEighthOfAnEpoch() {
        Run run = new Run();
        run.epochs(HandOffTrials.TRIAL_EVERY + 2, costs(150, 200)); // one trial, a third slower
        long oneTrial = run.onWriters;
        assertThat(oneTrial).isPositive();
        // Its settling and an eighth of an epoch, not the whole epoch (plus a pass's rounding).
        assertThat(oneTrial * BATCH)
                .isBetween(
                        HandOffTrials.SETTLE_EVICTIONS + HandOffTrials.EARLY_EVICTIONS,
                        HandOffTrials.SETTLE_EVICTIONS + HandOffTrials.EARLY_EVICTIONS + BATCH);
        assertThat(run.usesHandOff()).isTrue();
    }

    @Test
    void aTrialThatIsWinningRunsItsWholeEpoch() {
        Run run = new Run();
        run.epochs(HandOffTrials.TRIAL_EVERY + 2, costs(340, 195)); // one trial, a winner
        assertThat(run.onWriters * BATCH).isGreaterThanOrEqualTo(EPOCH);
    }

    @Test
    void aTrialWonOnceAndThenLostDoesNotSwitch() {
        Run run = new Run();
        run.epochs(HandOffTrials.TRIAL_EVERY + 4, costs(340, 195)); // one trial won
        run.epochs(4 * HandOffTrials.MAX_TRIAL_EVERY, costs(195, 195)); // the next ones lost
        assertThat(run.usesHandOff()).isTrue();
    }

    @Test
    void aTrialOnlySlightlyFasterIsNoWin() {
        Run run = new Run();
        run.epochs(4 * HandOffTrials.MAX_TRIAL_EVERY, costs(200, 180)); // 10%, under the margin
        assertThat(run.usesHandOff()).isTrue();
    }

    @Test
    void whenTheHandOffGetsFasterAgainItIsTakenBack() {
        Run run = new Run();
        run.epochs(3 * HandOffTrials.TRIAL_EVERY + 8, costs(340, 195)); // cores far apart
        assertThat(run.usesHandOff()).isFalse();
        // Cores close again: trials of the hand-off come every 16 epochs at first, and win.
        run.epochs(4 * HandOffTrials.TRIAL_EVERY + 8, costs(135, 195));
        assertThat(run.usesHandOff()).isTrue();
        assertThat(run.trials.wakeAnyway()).isFalse();
    }

    @Test
    void aTrialOfTheHandOffWakesTheExecutorWhateverAWakeCostBefore() {
        Run run = new Run();
        run.epochs(3 * HandOffTrials.TRIAL_EVERY + 8, costs(340, 195));
        assertThat(run.usesHandOff()).isFalse();
        boolean sawTrial = false;
        for (int i = 0; i < 40 * EPOCH / BATCH && !sawTrial; i++) {
            sawTrial = run.trials.wakeAnyway();
            assertThat(sawTrial).isEqualTo(run.trials.handOff()); // only ever while handed off in a trial
            run.now += BATCH * 195L;
            run.evictions += BATCH;
            run.trials.passEnded(run.now, run.evictions, true);
        }
        assertThat(sawTrial).isTrue();
    }

    @Test
    void epochsSlowerThanWritersInsertingFlatOutCompareNothing() {
        Run run = new Run();
        // Each epoch longer than the limit: the writers are doing other things than inserting.
        long slow = HandOffTrials.MAX_EPOCH_NANOS / HandOffTrials.EPOCH_EVICTIONS * 2;
        run.epochs(4 * HandOffTrials.TRIAL_EVERY, costs(3 * slow, slow));
        assertThat(run.onWriters).isZero(); // no epoch ended, so no trial began
        assertThat(run.usesHandOff()).isTrue();
    }

    @Test
    void withoutACoreForTheExecutorATrialInProgressEnds() {
        Run run = new Run();
        run.epochs(HandOffTrials.TRIAL_EVERY, costs(340, 195));
        // Run until a trial of the writers' way is in force, then say the executor has no core.
        for (int i = 0; i < 4 * EPOCH / BATCH && run.trials.handOff(); i++) {
            run.now += BATCH * 340L;
            run.evictions += BATCH;
            run.trials.passEnded(run.now, run.evictions, true);
        }
        assertThat(run.trials.handOff()).isFalse();
        run.trials.passEnded(run.now + 1, run.evictions + 1, false);
        assertThat(run.trials.handOff()).isTrue();
    }
}
