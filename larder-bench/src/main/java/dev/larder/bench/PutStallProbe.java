package dev.larder.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;

/**
 * Finds what a cache's slowest inserts wait for: fills a cache with N entries (16-byte keys,
 * 256-byte values), then has T threads insert fresh keys (so the cache evicts, as in {@code
 * GetPutBenchmark.putInsert}), timing each put. A watchdog thread takes the stack of any put that
 * has run longer than the threshold, once per put, and the probe prints how many puts passed it,
 * the longest, and the most frequent stacks (the cache's own frames first). JMH's SampleTime gives
 * the percentiles; this gives the reason.
 *
 * <p>The watchdog polls every 0.2 ms, so it is one more runnable thread: on a machine with as many
 * cores as writers it adds to the preemption it is there to observe. Compare runs, not absolutes.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms4g -Xmx4g \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.PutStallProbe \
 *     --cache larder --entries 1000000 --threads 2 --puts 3000000
 * </pre>
 */
public final class PutStallProbe {
    private static final VarHandle STARTED = MethodHandles.arrayElementVarHandle(long[].class);
    /** Longs between two threads' start times, so each sits on its own cache line. */
    private static final int PAD = 16;

    private PutStallProbe() {}

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        String name = opts.getOrDefault("cache", "larder");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "1000000"));
        int threads = Integer.parseInt(opts.getOrDefault("threads", "2"));
        int puts = Integer.parseInt(opts.getOrDefault("puts", "3000000"));
        long thresholdNanos = Long.parseLong(opts.getOrDefault("slow-ms", "1")) * 1_000_000;
        int frames = Integer.parseInt(opts.getOrDefault("frames", "8"));

        String[] keys = Keys.keys(0, entries);
        String[] fresh = Keys.keys(entries, GetPutBenchmark.insertPoolSize(entries));
        byte[] value = Keys.value(0, 256);
        try (BenchCache cache = Caches.create(name, entries, 256)) {
            for (int i = 0; i < entries; i++) {
                cache.put(keys[i], Keys.value(i, 256));
            }
            long[] started = new long[threads * PAD]; // 0: the thread is between puts
            Thread[] writers = new Thread[threads];
            LongAccumulator longest = new LongAccumulator(Math::max, 0);
            AtomicLong slow = new AtomicLong();
            for (int t = 0; t < threads; t++) {
                int id = t;
                writers[t] = new Thread(() -> {
                    for (int i = id; i < puts; i += threads) {
                        long start = System.nanoTime();
                        STARTED.setVolatile(started, id * PAD, start);
                        cache.put(fresh[i % fresh.length], value);
                        long took = System.nanoTime() - start;
                        STARTED.setVolatile(started, id * PAD, 0L);
                        longest.accumulate(took);
                        if (took > thresholdNanos) {
                            slow.incrementAndGet();
                        }
                    }
                });
            }
            Map<String, Integer> stacks = new HashMap<>();
            Thread watchdog = new Thread(() -> watch(writers, started, thresholdNanos, frames, stacks));
            watchdog.setDaemon(true);
            long begin = System.nanoTime();
            watchdog.start();
            for (Thread w : writers) {
                w.start();
            }
            for (Thread w : writers) {
                w.join();
            }
            long elapsed = System.nanoTime() - begin;
            watchdog.interrupt();
            watchdog.join();
            System.out.printf(
                    "%s N=%,d threads %d: %,d puts, %.0f ns per put per thread, %,d over %,d ms (%.3f%%), longest %.2f ms%n",
                    name,
                    entries,
                    threads,
                    puts,
                    (double) elapsed * threads / puts,
                    slow.get(),
                    thresholdNanos / 1_000_000,
                    100.0 * slow.get() / puts,
                    longest.get() / 1e6);
            stacks.entrySet().stream()
                    .sorted((a, b) -> b.getValue() - a.getValue())
                    .limit(10)
                    .forEach(e -> System.out.printf("%6d  %s%n", e.getValue(), e.getKey()));
        }
    }

    /** Until interrupted: the stack of each put found running past the threshold, once per put. */
    private static void watch(
            Thread[] writers, long[] started, long thresholdNanos, int frames, Map<String, Integer> stacks) {
        long[] seen = new long[writers.length];
        while (!Thread.currentThread().isInterrupted()) {
            for (int t = 0; t < writers.length; t++) {
                long start = (long) STARTED.getVolatile(started, t * PAD);
                if (start != 0 && start != seen[t] && System.nanoTime() - start > thresholdNanos) {
                    seen[t] = start;
                    stacks.merge(describe(writers[t].getStackTrace(), frames), 1, Integer::sum);
                }
            }
            try {
                Thread.sleep(0, 200_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The top {@code frames} frames, short class names, innermost first. */
    static String describe(StackTraceElement[] stack, int frames) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(frames, stack.length); i++) {
            String cls = stack[i].getClassName();
            s.append(i == 0 ? "" : " < ")
                    .append(cls.substring(cls.lastIndexOf('.') + 1))
                    .append('.')
                    .append(stack[i].getMethodName());
        }
        return s.toString();
    }
}
