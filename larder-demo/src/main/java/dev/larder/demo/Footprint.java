package dev.larder.demo;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.MemoryEstimator;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Larder's memory per entry: fills one cache per configuration in a fresh JVM with a fixed,
 * pre-touched heap (so heap growth cannot pass for cache memory) and reports bytes per entry by
 * the cache's own accounting and by process RSS growth, the overhead beyond the payload, heap
 * after GC, and the projection to one billion entries.
 *
 * <p>Run: {@code ./mvnw -q -Pfootprint -pl larder-demo -am -DskipTests package} (add
 * {@code -Dfootprint.args="1000000:256 10000000:32"} for other entries:valueBytes pairs).
 */
public final class Footprint {
    private static final int KEY_BYTES = 16;

    private Footprint() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--one")) {
            measure(Long.parseLong(args[1]), Integer.parseInt(args[2]));
            return;
        }
        String[] configs = args.length == 0 || args[0].isBlank()
                ? new String[] {"1000000:256", "1000000:32", "10000000:256", "10000000:32"}
                : String.join(" ", args).trim().split("\\s+");
        System.out.printf(
                "Larder footprint, %d-byte keys; JDK %s, %d cores; heap fixed at 64 MiB and pre-touched%n%n",
                KEY_BYTES, Runtime.version(), Runtime.getRuntime().availableProcessors());
        System.out.printf(
                "%11s %6s | %12s %12s %10s | %10s %10s | %12s %14s%n",
                "entries",
                "value",
                "native MiB",
                "B/entry",
                "overhead",
                "RSS B/entry",
                "heap MiB",
                "estimator",
                "1e9 entries");
        for (String config : configs) {
            String[] parts = config.split(":");
            Process p = new ProcessBuilder(
                            ProcessHandle.current().info().command().orElse("java"),
                            "-Xms64m",
                            "-Xmx64m",
                            "-XX:+AlwaysPreTouch",
                            "-XX:+UseSerialGC",
                            "-cp",
                            System.getProperty("java.class.path"),
                            Footprint.class.getName(),
                            "--one",
                            parts[0],
                            parts[1])
                    .inheritIO()
                    .start();
            if (p.waitFor() != 0) {
                throw new IllegalStateException("footprint run " + config + " failed");
            }
        }
        System.out.println();
        System.out.println("B/entry = the cache's native memory (records, index, pages) / entries;"
                + " overhead = B/entry - key - value;");
        System.out.println("RSS B/entry = process RSS growth while filling / entries; heap = used heap after GC;"
                + " estimator = MemoryEstimator's prediction; 1e9 = B/entry x 1e9.");
    }

    private static void measure(long entries, int valueBytes) {
        // Warm up the code paths on a small cache so JIT output does not count as cache memory.
        try (LarderCache<String, byte[]> warm = Larder.newBuilder(Codecs.latin1(), Codecs.bytes())
                .maximumBytes(8L << 20)
                .build()) {
            byte[] v = new byte[valueBytes];
            for (int i = 0; i < 200_000; i++) {
                warm.put(key(i % 20_000), v);
                warm.getIfPresent(key(i % 20_000));
            }
        }
        System.gc();
        long rssBefore = Measurement.residentSetBytes();
        MemoryEstimator.MemoryEstimate estimate = MemoryEstimator.estimate(entries, KEY_BYTES, valueBytes);
        // A budget with room to spare, so nothing is evicted and only what is used is counted.
        long budget = estimate.totalBytes() * 2;
        try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.latin1(), Codecs.bytes())
                .maximumBytes(budget)
                .build()) {
            byte[] value = new byte[valueBytes];
            for (long i = 0; i < entries; i++) {
                cache.put(key(i), value);
            }
            if (cache.size() != entries) {
                throw new IllegalStateException("expected " + entries + " entries, found " + cache.size());
            }
            System.gc();
            long rssGrowth = Measurement.residentSetBytes() - rssBefore;
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            double perEntry = (double) cache.memoryUsed() / entries;
            System.out.printf(
                    Locale.ROOT,
                    "%,11d %6d | %12.1f %12.1f %10.1f | %10.1f %10.1f | %12.1f %11.0f GB%n",
                    entries,
                    valueBytes,
                    cache.memoryUsed() / 1048576.0,
                    perEntry,
                    perEntry - KEY_BYTES - valueBytes,
                    (double) rssGrowth / entries,
                    heap / 1048576.0,
                    estimate.bytesPerEntry(),
                    perEntry * 1e9 / 1e9);
        }
    }

    /** A 16-byte Latin-1 key: "user:" and 11 digits. */
    private static String key(long i) {
        String digits = Long.toString(i);
        return "user:" + "00000000000".substring(digits.length()) + digits;
    }
}
