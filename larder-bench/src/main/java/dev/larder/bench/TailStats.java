package dev.larder.bench;

import java.util.Arrays;

/**
 * What the slow calls of a timed run are: percentiles of the per-call latencies, the share of calls
 * slower than a threshold, and how many of those fall on one position modulo a period. A periodic
 * step of the code under test (a cache that drains a buffer every 256 calls) puts its slow calls on
 * one position; the machine's own hiccups spread over all of them.
 *
 * @param p50 median latency, ns
 * @param p90 90th percentile, ns
 * @param p99 99th percentile, ns
 * @param p999 99.9th percentile, ns
 * @param mean mean latency, ns
 * @param slowShare share of calls slower than the threshold, 0 to 1
 * @param slowTimeShare share of the calls' total time spent in the slow ones, 0 to 1
 * @param busiestPosition the position modulo the period with the most slow calls
 * @param slowAtBusiestPosition slow calls at that position
 * @param slow all slow calls
 */
public record TailStats(
        long p50,
        long p90,
        long p99,
        long p999,
        double mean,
        double slowShare,
        double slowTimeShare,
        int busiestPosition,
        long slowAtBusiestPosition,
        long slow) {

    /**
     * The statistics of {@code latencies} (call {@code i} took {@code latencies[i]} ns), with calls
     * over {@code thresholdNanos} counted as slow, positions taken modulo {@code period}.
     */
    public static TailStats of(long[] latencies, long thresholdNanos, int period) {
        if (latencies.length == 0) {
            throw new IllegalArgumentException("no latencies");
        }
        if (period <= 0) {
            throw new IllegalArgumentException("period must be positive: " + period);
        }
        long[] byPosition = new long[period];
        long slow = 0;
        double total = 0; // a double: a sum of a billion calls' nanoseconds would not wrap, only round
        double slowTotal = 0;
        for (int i = 0; i < latencies.length; i++) {
            total += latencies[i];
            if (latencies[i] > thresholdNanos) {
                slow++;
                slowTotal += latencies[i];
                byPosition[i % period]++;
            }
        }
        int busiest = 0;
        for (int p = 1; p < period; p++) {
            if (byPosition[p] > byPosition[busiest]) {
                busiest = p;
            }
        }
        long[] sorted = latencies.clone();
        Arrays.sort(sorted);
        return new TailStats(
                percentile(sorted, 0.5),
                percentile(sorted, 0.9),
                percentile(sorted, 0.99),
                percentile(sorted, 0.999),
                total / latencies.length,
                (double) slow / latencies.length,
                total == 0 ? 0 : slowTotal / total,
                busiest,
                byPosition[busiest],
                slow);
    }

    /** The nearest-rank percentile {@code q} (0 to 1) of sorted values. */
    static long percentile(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.clamp(rank - 1, 0, sorted.length - 1)];
    }
}
