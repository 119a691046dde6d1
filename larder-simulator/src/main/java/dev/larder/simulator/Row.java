package dev.larder.simulator;

import dev.larder.simulator.Run.Outcome;
import dev.larder.simulator.policy.PolicyType;
import java.util.Map;

/**
 * The results of one workload at one cache size: one {@link Outcome} per policy.
 *
 * @param kind {@code trace} or {@code synthetic}
 * @param phaseStarts positions where the workload's phases start
 */
public record Row(
        String trace,
        String kind,
        int size,
        long requests,
        boolean phaseChange,
        long[] phaseStarts,
        Map<PolicyType, Outcome> outcomes) {

    /** {@code trace@size}. */
    public String label() {
        return trace + "@" + size;
    }

    /** The hit rate of {@code policy} in percent, or NaN if it did not run. */
    public double percent(PolicyType policy) {
        Outcome outcome = outcomes.get(policy);
        return outcome == null ? Double.NaN : 100.0 * outcome.hitRate();
    }
}
