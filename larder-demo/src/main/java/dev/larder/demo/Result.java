package dev.larder.demo;

import java.util.HashMap;
import java.util.Map;

/**
 * What one cache's run measured. Travels from the measured JVM to the demo as one line of text
 * ({@link #toLine}, {@link #parse}).
 *
 * @param cache which cache
 * @param entries entries the fill phase put
 * @param held entries the cache held after the fill
 * @param fillNanos time the fill took
 * @param heapGrowthBytes Java heap in use after a full GC, over the same figure before the fill
 * @param nativeBytes memory the cache held outside the heap after the fill
 * @param rssGrowthBytes growth of the process's resident set over the fill, or -1 if unknown
 * @param reads workload reads
 * @param hits workload reads that found their key
 * @param writes workload writes (not counting the put after a miss)
 * @param badValues reads that returned bytes of another entry (should be 0)
 * @param workloadNanos time the workload took
 * @param gcCount collections during the fill and the workload
 * @param gcPauseMillis time those collections took, as the JVM's collector beans report it
 */
record Result(
        CacheKind cache,
        long entries,
        long held,
        long fillNanos,
        long heapGrowthBytes,
        long nativeBytes,
        long rssGrowthBytes,
        long reads,
        long hits,
        long writes,
        long badValues,
        long workloadNanos,
        long gcCount,
        long gcPauseMillis) {

    static final String PREFIX = "LARDER-DEMO-RESULT ";

    /** Workload operations (reads and writes) per second. */
    double opsPerSecond() {
        return (reads + writes) / (workloadNanos / 1e9);
    }

    /** Fill puts per second. */
    double fillPerSecond() {
        return entries / (fillNanos / 1e9);
    }

    /** Hits over reads. */
    double hitRate() {
        return reads == 0 ? 0.0 : (double) hits / reads;
    }

    /** Heap growth plus native memory, per entry held. */
    double bytesPerEntry() {
        return held == 0 ? Double.NaN : (double) (Math.max(0, heapGrowthBytes) + nativeBytes) / held;
    }

    String toLine() {
        return PREFIX + "cache=" + cache.id() + " entries=" + entries + " held=" + held + " fillNanos=" + fillNanos
                + " heapGrowthBytes=" + heapGrowthBytes + " nativeBytes=" + nativeBytes + " rssGrowthBytes="
                + rssGrowthBytes + " reads=" + reads + " hits=" + hits + " writes=" + writes + " badValues="
                + badValues + " workloadNanos=" + workloadNanos + " gcCount=" + gcCount + " gcPauseMillis="
                + gcPauseMillis;
    }

    /** Parses a line written by {@link #toLine}. */
    static Result parse(String line) {
        if (!line.startsWith(PREFIX)) {
            throw new IllegalArgumentException("not a result line: " + line);
        }
        Map<String, String> f = new HashMap<>();
        for (String word : line.substring(PREFIX.length()).trim().split("\\s+")) {
            int eq = word.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("bad field '" + word + "' in result line: " + line);
            }
            f.put(word.substring(0, eq), word.substring(eq + 1));
        }
        return new Result(
                CacheKind.byId(field(f, "cache")),
                num(f, "entries"),
                num(f, "held"),
                num(f, "fillNanos"),
                num(f, "heapGrowthBytes"),
                num(f, "nativeBytes"),
                num(f, "rssGrowthBytes"),
                num(f, "reads"),
                num(f, "hits"),
                num(f, "writes"),
                num(f, "badValues"),
                num(f, "workloadNanos"),
                num(f, "gcCount"),
                num(f, "gcPauseMillis"));
    }

    private static String field(Map<String, String> f, String name) {
        String v = f.get(name);
        if (v == null) {
            throw new IllegalArgumentException("result line lacks " + name);
        }
        return v;
    }

    private static long num(Map<String, String> f, String name) {
        return Long.parseLong(field(f, name));
    }
}
