package dev.larder.simulator.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.larder.simulator.Run;
import dev.larder.simulator.Simulator;
import dev.larder.simulator.synthetic.SyntheticWorkloads;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PolicyTest {

    private static double hitRate(PolicyType type, int size, long[] keys) {
        return Simulator.runOne(type, size, keys, 0).hitRate();
    }

    @Test
    void lruGetsNothingOnALoopLargerThanTheCache() {
        long[] loop = SyntheticWorkloads.loop(110, 20_000);
        assertThat(hitRate(PolicyType.LRU, 100, loop)).isZero();
        // ...and everything but the compulsory misses once the loop fits.
        assertThat(hitRate(PolicyType.LRU, 110, loop)).isCloseTo(1 - 110 / 20_000.0, within(1e-9));
        // The bound keeps most of the cache useful on every pass.
        assertThat(hitRate(PolicyType.BELADY, 100, loop)).isGreaterThan(0.85);
    }

    @Test
    void compulsoryMissesCount() {
        long[] distinct = new long[1_000];
        for (int i = 0; i < distinct.length; i++) {
            distinct[i] = i;
        }
        for (PolicyType type : PolicyType.values()) {
            assertThat(hitRate(type, 10_000, distinct)).as(type.id()).isZero();
        }
    }

    @Test
    void beladyIsAtLeastEveryOtherPolicy() {
        List<long[]> traces = new ArrayList<>();
        traces.add(SyntheticWorkloads.zipf(0.99, 2_000, 30_000, 1));
        traces.add(SyntheticWorkloads.zipf(0.7, 5_000, 30_000, 2));
        traces.add(SyntheticWorkloads.loop(230, 20_000));
        traces.add(SyntheticWorkloads.uniform(400, 20_000, 3));
        traces.add(mixed(20_000, 4));
        for (long[] trace : traces) {
            for (int size : new int[] {50, 200}) {
                double bound = hitRate(PolicyType.BELADY, size, trace);
                for (PolicyType type : List.of(PolicyType.LRU, PolicyType.CAFFEINE, PolicyType.LARDER)) {
                    assertThat(hitRate(type, size, trace))
                            .as("%s at %d", type.id(), size)
                            .isLessThanOrEqualTo(bound);
                }
            }
        }
    }

    @Test
    void beladyMatchesABruteForceOptimum() {
        SplittableRandom random = new SplittableRandom(11);
        for (int round = 0; round < 40; round++) {
            int distinct = 2 + random.nextInt(30);
            long[] trace = new long[1 + random.nextInt(400)];
            for (int i = 0; i < trace.length; i++) {
                trace[i] = random.nextInt(distinct) * 1_000_003L - 500;
            }
            int size = 1 + random.nextInt(distinct);
            long expected = bruteForceMin(trace, size);
            long hits = Run.run(new BeladyPolicy(size, trace), trace, 0).hits();
            assertThat(hits).as("round %d, size %d", round, size).isEqualTo(expected);
        }
    }

    @Test
    void beladyRefusesAnotherSequence() {
        BeladyPolicy belady = new BeladyPolicy(2, new long[] {1, 2});
        belady.access(1);
        assertThatThrownBy(() -> belady.access(3)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void uniformOverTwiceTheSizeGivesAboutHalf() {
        int size = 1_000;
        long[] uniform = SyntheticWorkloads.uniform(2L * size, 200_000, 5);
        for (PolicyType type : List.of(PolicyType.LRU, PolicyType.CAFFEINE, PolicyType.LARDER)) {
            assertThat(hitRate(type, size, uniform)).as(type.id()).isCloseTo(0.5, within(0.02));
        }
        assertThat(hitRate(PolicyType.BELADY, size, uniform)).isGreaterThanOrEqualTo(0.5);
    }

    @Test
    void larderHonoursItsEntryBound() {
        try (LarderPolicy larder = new LarderPolicy(300)) {
            for (long key : SyntheticWorkloads.uniform(10_000, 20_000, 6)) {
                larder.access(key);
                assertThat(larder.size()).isLessThanOrEqualTo(300);
            }
        }
    }

    @Test
    void repeatRunsOnlyTheNonDeterministicPoliciesAgain() {
        long[] trace = SyntheticWorkloads.zipf(0.99, 2_000, 20_000, 8);
        Run.Outcome lru = Simulator.runRepeated(PolicyType.LRU, 100, trace, 1_000, 3);
        assertThat(lru.runs()).isEqualTo(1);
        Run.Outcome caffeine = Simulator.runRepeated(PolicyType.CAFFEINE, 100, trace, 1_000, 3);
        assertThat(caffeine.runs()).isEqualTo(3);
        assertThat(caffeine.hitRate()).isBetween(caffeine.minHitRate(), caffeine.maxHitRate());
        assertThat(caffeine.windowHits()).hasSize(20);
        double windowMean = 0;
        for (int w = 0; w < 20; w++) {
            windowMean += caffeine.windowHitRate(w) / 20;
        }
        assertThat(windowMean).isCloseTo(caffeine.hitRate(), within(1e-9));
    }

    @Test
    void policyIdsParse() {
        for (PolicyType type : PolicyType.values()) {
            assertThat(PolicyType.of(type.id().toUpperCase())).isEqualTo(type);
        }
        assertThat(PolicyType.of("opt")).isEqualTo(PolicyType.BELADY);
        assertThatThrownBy(() -> PolicyType.of("arc")).hasMessageContaining("known: lru");
    }

    /** Alternates a hot Zipf phase with one-hit scans, to give recency and frequency a fight. */
    private static long[] mixed(int n, long seed) {
        long[] hot = SyntheticWorkloads.zipf(1.0, 1_000, n, seed);
        long[] trace = new long[n];
        long scan = 1L << 40;
        for (int i = 0; i < n; i++) {
            trace[i] = (i / 1_000) % 3 == 2 ? scan++ : hot[i];
        }
        return trace;
    }

    /** MIN the slow way: on a miss, drop whichever of the residents and the newcomer is used last. */
    private static long bruteForceMin(long[] trace, int size) {
        Set<Long> cache = new HashSet<>();
        long hits = 0;
        for (int i = 0; i < trace.length; i++) {
            if (cache.contains(trace[i])) {
                hits++;
                continue;
            }
            cache.add(trace[i]);
            if (cache.size() > size) {
                long victim = 0;
                int farthest = -1;
                for (long key : cache) {
                    int next = trace.length;
                    for (int j = i + 1; j < trace.length; j++) {
                        if (trace[j] == key) {
                            next = j;
                            break;
                        }
                    }
                    if (next > farthest) {
                        farthest = next;
                        victim = key;
                    }
                }
                cache.remove(victim);
            }
        }
        return hits;
    }
}
