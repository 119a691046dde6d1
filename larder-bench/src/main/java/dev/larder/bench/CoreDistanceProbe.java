package dev.larder.bench;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a cache line costs to move between two threads' cores, now: two threads hand a counter
 * back and forth and the probe prints the nanoseconds per crossing (the median of a few runs).
 *
 * <p>On the 2-core guests these benchmarks ran on, the host moved the two vCPUs between nearby
 * cores (~25 ns per crossing) and distant ones (~200-250 ns), for minutes at a time, and every
 * benchmark whose threads share lines (Larder's inserts with the executor evicting, any two-thread
 * row) ran at one of two speeds accordingly (docs/speed-work.md, fifty-fifth and fifty-sixth
 * sessions). {@code ab.sh} runs this before and after each fork, so that a pair's forks can be
 * compared only when they ran in one placement.
 *
 * <pre>
 * java -cp larder-bench/target/benchmarks.jar dev.larder.bench.CoreDistanceProbe [--rounds 400000] [--runs 3]
 * </pre>
 *
 * <p>Prints one number (ns per crossing), or {@code n/a} with fewer than two processors, where
 * the threads would take turns on one core instead of handing a line over.
 */
public final class CoreDistanceProbe {
    private CoreDistanceProbe() {}

    /** A run stops at this time even if its rounds are not done (a descheduled partner). */
    static final long RUN_LIMIT_NANOS = 200_000_000L;

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "400000"));
        int runs = Integer.parseInt(opts.getOrDefault("runs", "3"));
        if (Runtime.getRuntime().availableProcessors() < 2) {
            System.out.println("n/a");
            return;
        }
        // A first run, not counted, while the JIT compiles the two loops: in runs of 20,000 rounds
        // from a fresh JVM the figure spread over 32-162 ns in a minute of steady 30-40.
        crossingNanos(Math.max(1, rounds / 4), RUN_LIMIT_NANOS);
        System.out.printf("%.1f%n", medianCrossingNanos(rounds, runs, RUN_LIMIT_NANOS));
    }

    /** The median of {@code runs} runs of {@link #crossingNanos}. */
    static double medianCrossingNanos(int rounds, int runs, long limitNanos) throws InterruptedException {
        if (runs < 1) {
            throw new IllegalArgumentException("runs must be at least 1: " + runs);
        }
        double[] each = new double[runs];
        for (int i = 0; i < runs; i++) {
            each[i] = crossingNanos(rounds, limitNanos);
        }
        Arrays.sort(each);
        return runs % 2 == 1 ? each[runs / 2] : (each[runs / 2 - 1] + each[runs / 2]) / 2;
    }

    /**
     * Nanoseconds per crossing of one counter between this thread and a partner: this thread
     * writes an odd value and waits for the partner's next even one, {@code rounds} times (two
     * crossings a round), or fewer if {@code limitNanos} pass first.
     */
    static double crossingNanos(int rounds, long limitNanos) throws InterruptedException {
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be at least 1: " + rounds);
        }
        AtomicLong counter = new AtomicLong();
        // The partner answers every odd value until it sees the stop value (-1).
        Thread partner = new Thread(() -> {
            long seen = 0;
            for (; ; ) {
                long v = counter.get();
                if (v == -1) {
                    return;
                }
                if (v != seen && (v & 1) == 1) {
                    seen = v + 1;
                    counter.set(seen);
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        partner.setDaemon(true);
        partner.start();
        // One round first, untimed: the partner is running once it answers.
        counter.set(1);
        while (counter.get() != 2) {
            Thread.onSpinWait();
        }
        long start = System.nanoTime();
        long deadline = start + limitNanos;
        int done = 0;
        for (long v = 3; done < rounds; v += 2) {
            counter.set(v);
            while (counter.get() != v + 1) {
                Thread.onSpinWait();
            }
            done++;
            if ((done & 1023) == 0 && System.nanoTime() - deadline > 0) {
                break;
            }
        }
        long elapsed = System.nanoTime() - start;
        counter.set(-1);
        partner.join();
        return (double) elapsed / (2L * done);
    }
}
