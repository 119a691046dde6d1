package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.MemoryBudget;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The duel's rule: a candidate needs a lead of two counts; a lead of one gets it in about one time
 * in {@link WindowTinyLfu#NARROW_LEAD_ODDS}, and a warm candidate that does not lead about one
 * time in 128.
 */
class WindowTinyLfuAdmissionTest {
    private static final long CANDIDATE = 0x1234_5678_9ABC_DEF1L;

    private WindowTinyLfu policy;
    private long victim;

    @BeforeEach
    void setUp() {
        policy = new WindowTinyLfu(1_000, 42, new MemoryBudget(1 << 20));
        policy.startCounting();
        // A victim in another block of the sketch: the two keys share no counter, so their
        // estimates are exactly what the test recorded.
        victim = CANDIDATE + 1;
        while (policy.sketchBlock(victim) == policy.sketchBlock(CANDIDATE)) {
            victim += 0x9E37_79B9_7F4A_7C15L;
        }
    }

    @AfterEach
    void tearDown() {
        policy.free();
    }

    private void counts(int candidate, int victimCount) {
        for (int i = 0; i < candidate; i++) {
            policy.record(CANDIDATE);
        }
        for (int i = 0; i < victimCount; i++) {
            policy.record(victim);
        }
    }

    private int admissions(int duels) {
        int admitted = 0;
        for (int i = 0; i < duels; i++) {
            admitted += policy.admit(CANDIDATE, victim) ? 1 : 0;
        }
        return admitted;
    }

    @Test
    void aLeadOfTwoAlwaysWins() {
        counts(3, 1);
        assertThat(admissions(10_000)).isEqualTo(10_000);
    }

    @Test
    void aTieOfColdKeysNeverWins() {
        counts(2, 2);
        assertThat(admissions(10_000)).isZero();
    }

    @Test
    void aLeadOfOneWinsAboutOneTimeInThirtyTwo() {
        counts(3, 2);
        int duels = 1_000 * WindowTinyLfu.NARROW_LEAD_ODDS;
        // Expected 1,000; the binomial standard deviation is about 31.
        assertThat(admissions(duels)).isBetween(800, 1_200);
    }

    @Test
    void aWarmCandidateThatDoesNotLeadWinsAboutOneTimeIn128() {
        counts(WindowTinyLfu.WARM, WindowTinyLfu.WARM);
        assertThat(admissions(128_000)).isBetween(800, 1_200);
    }

    @Test
    void aColdCandidateBehindTheVictimNeverWins() {
        counts(1, 4);
        assertThat(admissions(10_000)).isZero();
    }
}
