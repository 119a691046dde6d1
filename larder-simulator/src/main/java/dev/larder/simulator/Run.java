package dev.larder.simulator;

import dev.larder.simulator.policy.Policy;

/**
 * Drives one policy through one request sequence from a cold cache and counts its hits, in
 * total and per window of {@code window} requests.
 */
public final class Run {
    private Run() {}

    /**
     * The outcome of one or more runs of a policy over the same sequence. {@code runHits[r]} counts
     * the hits of run {@code r}; {@code windowHits[w]} counts the hits, summed over the runs, among
     * requests {@code [w*window, (w+1)*window)}; {@code nanos} is the time of all runs.
     */
    public record Outcome(long requests, long[] runHits, int window, int[] windowHits, long nanos) {
        public int runs() {
            return runHits.length;
        }

        /** Hits summed over the runs. */
        public long hits() {
            long sum = 0;
            for (long h : runHits) {
                sum += h;
            }
            return sum;
        }

        /** Hits per run, on average. */
        public double meanHits() {
            return (double) hits() / runs();
        }

        /** The mean hit rate over the runs. */
        public double hitRate() {
            return requests == 0 ? 0 : meanHits() / requests;
        }

        public double minHitRate() {
            long min = Long.MAX_VALUE;
            for (long h : runHits) {
                min = Math.min(min, h);
            }
            return requests == 0 ? 0 : (double) min / requests;
        }

        public double maxHitRate() {
            long max = 0;
            for (long h : runHits) {
                max = Math.max(max, h);
            }
            return requests == 0 ? 0 : (double) max / requests;
        }

        /** The mean hit rate of window {@code w} (the last one may be shorter). */
        public double windowHitRate(int w) {
            long start = (long) w * window;
            long length = Math.min(window, requests - start);
            return length <= 0 ? 0 : (double) windowHits[w] / length / runs();
        }

        /** Time per request per run. */
        public double nanosPerRequest() {
            return requests == 0 ? 0 : (double) nanos / requests / runs();
        }

        /** This outcome and {@code other}'s, over the same sequence, as one of more runs. */
        public Outcome plus(Outcome other) {
            if (other.requests != requests || other.window != window) {
                throw new IllegalArgumentException("outcomes of different sequences");
            }
            long[] runs = java.util.Arrays.copyOf(runHits, runHits.length + other.runHits.length);
            System.arraycopy(other.runHits, 0, runs, runHits.length, other.runHits.length);
            int[] windows = windowHits.clone();
            for (int w = 0; w < windows.length; w++) {
                windows[w] += other.windowHits[w];
            }
            return new Outcome(requests, runs, window, windows, nanos + other.nanos);
        }
    }

    /** Runs {@code policy} over all of {@code requests}; {@code window} > 0 also counts per window. */
    public static Outcome run(Policy policy, long[] requests, int window) {
        int windows = window > 0 ? (int) ((requests.length + (long) window - 1) / window) : 0;
        int[] windowHits = new int[windows];
        long hits = 0;
        long start = System.nanoTime();
        if (window > 0) {
            for (int w = 0, i = 0; w < windows; w++) {
                int end = (int) Math.min(requests.length, (long) i + window);
                int h = 0;
                for (; i < end; i++) {
                    if (policy.access(requests[i])) {
                        h++;
                    }
                }
                windowHits[w] = h;
                hits += h;
            }
        } else {
            for (long key : requests) {
                if (policy.access(key)) {
                    hits++;
                }
            }
        }
        return new Outcome(
                requests.length, new long[] {hits}, Math.max(0, window), windowHits, System.nanoTime() - start);
    }
}
