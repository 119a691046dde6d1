package dev.larder.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Fills each cache with N entries (16-byte keys, V-byte values) and measures what they cost: heap
 * retained after a full GC, growth of the process's resident set (native memory), bytes per entry,
 * overhead per entry beyond the key and value bytes, GC count and time while filling, and what a
 * billion entries would take.
 *
 * <p>Each cache is measured in a JVM of its own, started with only that cache's flags, a fixed
 * pre-touched heap ({@code -Xms = -Xmx}, {@code -XX:+AlwaysPreTouch}) so that RSS growth is memory
 * outside the heap, and G1. Keys and values are fresh objects per entry, so on-heap caches keep
 * what they would keep in an application.
 *
 * <pre>
 * java -cp larder-bench/target/benchmarks.jar dev.larder.bench.MemoryProbe \
 *     --entries 1000000,10000000 --value-sizes 256,32 --out larder-bench/results/memory.json
 * </pre>
 */
public final class MemoryProbe {
    static final String RESULT_PREFIX = "PROBE-RESULT ";

    private MemoryProbe() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of("child"));
        if (opts.containsKey("child")) {
            child(opts.get("cache"), Long.parseLong(opts.get("entries")), Integer.parseInt(opts.get("value-size")));
            System.exit(0); // peers may leave non-daemon threads
        }
        List<String> caches = Arrays.asList(
                opts.getOrDefault("caches", String.join(",", Peer.ids())).split(","));
        long[] entries = Arrays.stream(opts.getOrDefault("entries", "1000000").split(","))
                .mapToLong(Long::parseLong)
                .toArray();
        int[] valueSizes = Arrays.stream(
                        opts.getOrDefault("value-sizes", "256,32").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        Path out = Path.of(opts.getOrDefault("out", "larder-bench/results/memory.json"));
        long timeoutMinutes = Long.parseLong(opts.getOrDefault("timeout-minutes", "20"));

        List<Object> results = new ArrayList<>();
        for (long n : entries) {
            for (int v : valueSizes) {
                for (String cache : caches) {
                    Map<String, Object> r = runChild(Peer.of(cache), n, v, timeoutMinutes);
                    System.out.println(Json.write(r));
                    results.add(r);
                }
            }
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("date", Instant.now().toString());
        doc.put("java", Runtime.version().toString());
        doc.put("vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        doc.put("keyBytes", Keys.KEY_BYTES);
        doc.put("results", results);
        if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
        }
        Files.writeString(out, Json.write(doc) + "\n");
        System.out.println("wrote " + out);
    }

    private static Map<String, Object> runChild(Peer peer, long entries, int valueBytes, long timeoutMinutes)
            throws IOException, InterruptedException {
        long heap = ProbeMath.childHeapBytes(peer.onHeap(), entries, valueBytes);
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-Xms" + (heap >> 20) + "m");
        cmd.add("-Xmx" + (heap >> 20) + "m");
        cmd.add("-XX:+AlwaysPreTouch");
        cmd.add("-XX:+UseG1GC");
        cmd.addAll(peer.jvmFlags());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(MemoryProbe.class.getName());
        cmd.addAll(List.of(
                "--child", "--cache", peer.id(), "--entries", Long.toString(entries), "--value-size", "" + valueBytes));
        System.err.printf(
                "probe: %s, %,d entries, %d-byte values, heap %d MiB%n", peer.id(), entries, valueBytes, heap >> 20);
        Path log = Files.createTempFile("larder-probe-", ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean done = p.waitFor(timeoutMinutes, TimeUnit.MINUTES);
        if (!done) {
            p.destroyForcibly();
            p.waitFor();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        for (String line : output.split("\n")) {
            if (line.startsWith(RESULT_PREFIX)) {
                return parseFlatJson(line.substring(RESULT_PREFIX.length()));
            }
        }
        Map<String, Object> failed = new LinkedHashMap<>();
        failed.put("cache", peer.id());
        failed.put("entries", entries);
        failed.put("valueBytes", valueBytes);
        failed.put("ok", false);
        failed.put("reason", done ? lastLines(output, 3) : "timed out after " + timeoutMinutes + " minutes");
        return failed;
    }

    private static void child(String cacheId, long entries, int valueBytes) {
        Peer peer = Peer.of(cacheId);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("cache", peer.id());
        r.put("entries", entries);
        r.put("valueBytes", valueBytes);
        r.put("keyBytes", Keys.KEY_BYTES);
        r.put("heapMaxBytes", Runtime.getRuntime().maxMemory());
        r.put("flags", peer.jvmFlags());
        // Load and compile the cache's code before the baseline, so class metadata and JIT code
        // are not counted per entry.
        try (BenchCache warm = Caches.create(cacheId, 10_000, valueBytes)) {
            byte[] v = Keys.value(1, valueBytes);
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 20_000; i++) {
                    warm.put(Keys.key(i), v);
                    warm.get(Keys.key(i / 2));
                }
            }
        }
        fullGc();
        long heap0 = heapUsed();
        long rss0 = rss();
        long gcCount0 = gcCount();
        long gcMillis0 = gcMillis();
        long t0 = System.nanoTime();

        BenchCache cache = Caches.create(cacheId, entries, valueBytes);
        byte[] template = Keys.value(7, valueBytes);
        for (long i = 0; i < entries; i++) {
            byte[] value = template.clone();
            for (int b = 0; b < Math.min(8, valueBytes); b++) {
                value[b] = (byte) (i >>> (8 * b));
            }
            cache.put(Keys.key(i), value);
        }
        long fillNanos = System.nanoTime() - t0;
        long gcCount = gcCount() - gcCount0;
        long gcMillis = gcMillis() - gcMillis0;
        fullGc();
        long heapRetained = heapUsed() - heap0;
        long rssGrowth = rss() - rss0;

        long held = 0;
        for (long i = 0; i < entries; i++) {
            if (cache.get(Keys.key(i)) != null) {
                held++;
            }
        }
        long reported = cache.reportedBytes();
        double perEntry = ProbeMath.bytesPerEntry(heapRetained, rssGrowth, held);
        r.put("ok", true);
        r.put("entriesHeld", held);
        r.put("heapRetainedBytes", heapRetained);
        r.put("rssGrowthBytes", rssGrowth);
        r.put("reportedBytes", reported);
        r.put("bytesPerEntry", perEntry);
        r.put("overheadPerEntry", ProbeMath.overheadPerEntry(perEntry, Keys.KEY_BYTES, valueBytes));
        r.put("projectedBytesFor1B", ProbeMath.projectBytes(perEntry, 1_000_000_000L));
        r.put("fillSeconds", fillNanos / 1e9);
        r.put("gcCountWhileFilling", gcCount);
        r.put("gcMillisWhileFilling", gcMillis);
        System.out.println(RESULT_PREFIX + Json.write(r));
        System.out.flush();
        cache.close();
    }

    private static void fullGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long rss() {
        try {
            return ProbeMath.rssBytes(Files.readString(Path.of("/proc/self/status")));
        } catch (IOException e) {
            throw new UncheckedIOException("the probe reads RSS from /proc/self/status (Linux only)", e);
        }
    }

    private static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    private static long gcMillis() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionTime());
        }
        return n;
    }

    private static String lastLines(String text, int n) {
        String[] lines = text.strip().split("\n");
        StringBuilder sb = new StringBuilder();
        for (int i = Math.max(0, lines.length - n); i < lines.length; i++) {
            sb.append(lines[i].strip()).append(i < lines.length - 1 ? " | " : "");
        }
        return sb.toString();
    }

    /** Parses the child's one-line object of strings, numbers, booleans and string lists. */
    static Map<String, Object> parseFlatJson(String json) {
        Map<String, Object> m = new LinkedHashMap<>();
        String s = json.strip();
        int i = 1;
        while (i < s.length() - 1) {
            int k0 = s.indexOf('"', i);
            if (k0 < 0) {
                break;
            }
            int k1 = s.indexOf('"', k0 + 1);
            String key = s.substring(k0 + 1, k1);
            int colon = s.indexOf(':', k1);
            int v0 = colon + 1;
            while (s.charAt(v0) == ' ') {
                v0++;
            }
            int v1;
            Object value;
            char c = s.charAt(v0);
            if (c == '"') {
                v1 = v0 + 1;
                while (s.charAt(v1) != '"' || s.charAt(v1 - 1) == '\\') {
                    v1++;
                }
                value = s.substring(v0 + 1, v1).replace("\\\"", "\"").replace("\\\\", "\\");
                v1++;
            } else if (c == '[') {
                v1 = s.indexOf(']', v0) + 1;
                List<String> list = new ArrayList<>();
                for (String part : s.substring(v0 + 1, v1 - 1).split(",")) {
                    String t = part.strip();
                    if (!t.isEmpty()) {
                        list.add(t.substring(1, t.length() - 1));
                    }
                }
                value = list;
            } else {
                v1 = v0;
                while (v1 < s.length() && s.charAt(v1) != ',' && s.charAt(v1) != '}') {
                    v1++;
                }
                String t = s.substring(v0, v1).strip();
                value = switch (t) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    case "null" -> null;
                    default ->
                        t.contains(".") || t.contains("E")
                                ? (Object) Double.parseDouble(t)
                                : (Object) Long.parseLong(t);
                };
            }
            m.put(key, value);
            i = v1 + 1;
        }
        return m;
    }
}
