package dev.larder.demo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one demo run measures: how many entries to fill, over how many keys the workload draws,
 * how big the values are, and how long and on how many threads the mixed workload runs.
 *
 * @param entries entries filled into each cache; also each cache's entry limit
 * @param keySpace distinct keys the workload draws from (keys at or past {@code entries} start
 *     absent, so some reads miss)
 * @param valueBytes size of every value
 * @param workloadMillis how long the mixed workload runs
 * @param threads workload threads
 * @param readPercent share of workload operations that are reads; the rest are writes
 * @param zipfExponent skew of the key popularity (0 is uniform; near 1 is web-like)
 */
record Settings(
        int entries,
        int keySpace,
        int valueBytes,
        long workloadMillis,
        int threads,
        int readPercent,
        double zipfExponent) {

    /** The README's run: a million entries, 5 s of 90% reads on 2 threads. */
    static final Settings DEFAULT = new Settings(1_000_000, 2_000_000, 256, 5_000, 2, 90, 0.99);

    Settings {
        if (entries <= 0) {
            throw new IllegalArgumentException("entries must be positive, was " + entries);
        }
        if (keySpace < entries) {
            throw new IllegalArgumentException("keySpace must be at least entries, was " + keySpace);
        }
        if (valueBytes < Long.BYTES) {
            throw new IllegalArgumentException("valueBytes must be at least 8, was " + valueBytes);
        }
        if (workloadMillis <= 0 || threads <= 0) {
            throw new IllegalArgumentException("workloadMillis and threads must be positive");
        }
        if (readPercent < 0 || readPercent > 100) {
            throw new IllegalArgumentException("readPercent must be in [0, 100], was " + readPercent);
        }
        if (!(zipfExponent >= 0) || zipfExponent == 1.0) {
            throw new IllegalArgumentException("zipfExponent must be >= 0 and not 1, was " + zipfExponent);
        }
    }

    /** Settings for a smaller or shorter run; the key space stays twice the entries. */
    static Settings of(int entries, long workloadMillis, int threads) {
        return new Settings(
                entries,
                2 * entries,
                DEFAULT.valueBytes,
                workloadMillis,
                threads,
                DEFAULT.readPercent,
                DEFAULT.zipfExponent);
    }

    /** The memory budget Larder gets: room for every entry with margin, so the fill evicts none. */
    long larderMaximumBytes() {
        return (long) entries * 400 + (16L << 20);
    }

    /**
     * Parses {@code name=value} words (several may share one argument, separated by spaces):
     * {@code entries}, {@code keys}, {@code value-bytes}, {@code seconds}, {@code threads},
     * {@code reads} (percent), {@code zipf}. Words not of that form are returned in {@code rest}.
     */
    static Settings parse(String[] args, List<String> rest) {
        Map<String, String> named = new LinkedHashMap<>();
        for (String arg : args) {
            for (String word : arg.trim().split("\\s+")) {
                if (word.isEmpty()) {
                    continue;
                }
                int eq = word.indexOf('=');
                if (eq > 0) {
                    named.put(word.substring(0, eq), word.substring(eq + 1));
                } else {
                    rest.add(word);
                }
            }
        }
        int entries = intArg(named, "entries", DEFAULT.entries);
        Settings s = new Settings(
                entries,
                intArg(named, "keys", 2 * entries),
                intArg(named, "value-bytes", DEFAULT.valueBytes),
                Math.round(Double.parseDouble(named.getOrDefault("seconds", "5")) * 1000),
                intArg(named, "threads", DEFAULT.threads),
                intArg(named, "reads", DEFAULT.readPercent),
                Double.parseDouble(named.getOrDefault("zipf", Double.toString(DEFAULT.zipfExponent))));
        named.keySet().removeAll(List.of("entries", "keys", "value-bytes", "seconds", "threads", "reads", "zipf"));
        for (var e : named.entrySet()) {
            rest.add(e.getKey() + "=" + e.getValue());
        }
        return s;
    }

    /** The arguments that make {@link #parse} return these settings. */
    List<String> toArgs() {
        List<String> args = new ArrayList<>();
        args.add("entries=" + entries);
        args.add("keys=" + keySpace);
        args.add("value-bytes=" + valueBytes);
        args.add("seconds=" + workloadMillis / 1000.0);
        args.add("threads=" + threads);
        args.add("reads=" + readPercent);
        args.add("zipf=" + zipfExponent);
        return args;
    }

    private static int intArg(Map<String, String> named, String name, int fallback) {
        String v = named.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.replace("_", "").replace(",", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, was " + v, e);
        }
    }
}
