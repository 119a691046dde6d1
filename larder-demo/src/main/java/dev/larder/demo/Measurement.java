package dev.larder.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * One cache's run, in the current JVM: fill it, settle, measure memory, run the mixed workload,
 * and count the collections along the way. The demo runs each cache in a JVM of its own so that
 * the heap and GC figures belong to that cache alone; the smoke test runs it in-process.
 */
final class Measurement {
    private Measurement() {}

    /** Runs {@code kind} with {@code settings}; progress lines go to {@code progress}. */
    static Result run(CacheKind kind, Settings settings, PrintStream progress) {
        Workload workload = new Workload(settings);
        String name = kind.displayName();

        settleHeap();
        long heapBefore = heapUsed();
        long rssBefore = residentSetBytes();
        GcTotals gcAtStart = GcTotals.now();

        try (CacheKind.DemoCache cache = kind.open(settings)) {
            progress.printf(Locale.ROOT, "%s: filling %,d entries...%n", name, settings.entries());
            long fillStart = System.nanoTime();
            for (int i = 0; i < settings.entries(); i++) {
                cache.put(Workload.key(i), workload.value(i));
            }
            cache.cleanUp();
            long fillNanos = System.nanoTime() - fillStart;
            GcTotals gcAfterFill = GcTotals.now();

            // The demo's own full collections are not the cache's doing: they fall outside the
            // two windows (fill, workload) that the GC figures cover.
            settleHeap();
            long heapGrowth = heapUsed() - heapBefore;
            long rssAfter = residentSetBytes();
            long rssGrowth = rssBefore < 0 || rssAfter < 0 ? -1 : rssAfter - rssBefore;
            long nativeBytes = cache.nativeBytes();
            long held = cache.size();

            progress.printf(
                    Locale.ROOT,
                    "%s: mixed workload, %d%% reads, %d thread(s), %.1f s...%n",
                    name,
                    settings.readPercent(),
                    settings.threads(),
                    settings.workloadMillis() / 1000.0);
            GcTotals gcBeforeWorkload = GcTotals.now();
            Counters total = runWorkload(cache, workload, settings);
            GcTotals gcAfterWorkload = GcTotals.now();

            long gcCount = gcAfterFill.count - gcAtStart.count + gcAfterWorkload.count - gcBeforeWorkload.count;
            long gcMillis = gcAfterFill.millis - gcAtStart.millis + gcAfterWorkload.millis - gcBeforeWorkload.millis;
            return new Result(
                    kind,
                    settings.entries(),
                    held,
                    fillNanos,
                    heapGrowth,
                    nativeBytes,
                    rssGrowth,
                    total.reads,
                    total.hits,
                    total.writes,
                    total.badValues,
                    total.nanos,
                    gcCount,
                    gcMillis);
        }
    }

    private static Counters runWorkload(CacheKind.DemoCache cache, Workload workload, Settings settings) {
        long start = System.nanoTime();
        long deadline = start + settings.workloadMillis() * 1_000_000L;
        List<Counters> perThread = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < settings.threads(); t++) {
            Counters c = new Counters();
            perThread.add(c);
            SplittableRandom random = new SplittableRandom(0x5EED_0000L + t);
            threads.add(Thread.ofPlatform()
                    .name("workload-" + t)
                    .start(() -> work(cache, workload, settings.readPercent(), random, deadline, c)));
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the workload", e);
            }
        }
        Counters total = new Counters();
        for (Counters c : perThread) {
            if (c.failure != null) {
                throw new IllegalStateException("workload thread failed", c.failure);
            }
            total.reads += c.reads;
            total.hits += c.hits;
            total.writes += c.writes;
            total.badValues += c.badValues;
        }
        total.nanos = System.nanoTime() - start;
        return total;
    }

    /** One thread's loop: reads (read-through on a miss) and writes, until the deadline. */
    private static void work(
            CacheKind.DemoCache cache,
            Workload workload,
            int readPercent,
            SplittableRandom random,
            long deadline,
            Counters c) {
        try {
            do {
                for (int i = 0; i < 256; i++) {
                    long index = workload.nextIndex(random);
                    String key = Workload.key(index);
                    if (random.nextInt(100) < readPercent) {
                        c.reads++;
                        byte[] value = cache.get(key);
                        if (value == null) {
                            cache.put(key, workload.value(index));
                        } else {
                            c.hits++;
                            if (!workload.matches(value, index)) {
                                c.badValues++;
                            }
                        }
                    } else {
                        c.writes++;
                        cache.put(key, workload.value(index));
                    }
                }
            } while (System.nanoTime() < deadline);
        } catch (Throwable t) {
            c.failure = t;
        }
    }

    private static final class Counters {
        long reads;
        long hits;
        long writes;
        long badValues;
        long nanos;
        Throwable failure;
    }

    /** Collections so far and the time they took, over every collector bean. */
    private record GcTotals(long count, long millis) {
        static GcTotals now() {
            long count = 0;
            long millis = 0;
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                // ZGC and Shenandoah also report whole concurrent cycles ("... Cycles"), which
                // are not pauses; G1's beans (young, concurrent-cycle pauses, full) all are.
                if (gc.getName().endsWith("Cycles")) {
                    continue;
                }
                count += Math.max(0, gc.getCollectionCount());
                millis += Math.max(0, gc.getCollectionTime());
            }
            return new GcTotals(count, millis);
        }
    }

    /** Two full collections, so that the heap in use is the live data. */
    static void settleHeap() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
    }

    static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** The process's resident set (VmRSS in /proc/self/status), or -1 where there is none. */
    static long residentSetBytes() {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) {
            return -1;
        }
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmRSS:")) {
                    String[] parts = line.substring("VmRSS:".length()).trim().split("\\s+");
                    return Long.parseLong(parts[0]) * 1024; // reported in kB
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
