package dev.larder.bench;

import java.util.Map;
import java.util.Set;

/**
 * Times calls one by one to find what a cache's slow calls are and how much of its mean they
 * make: fills a cache with N entries (16-byte keys, 256-byte values), then times each call with
 * {@link System#nanoTime()} and prints {@link TailStats} per round. {@code --op get} (the default)
 * reads uniformly random present keys; {@code --op insert} puts fresh keys, cycling through
 * {@code GetPutBenchmark.putInsert}'s pool, so the cache evicts at every insert. JMH's SampleTime
 * gives the percentiles; this shows where the slow calls sit (Larder's reader drain is one GET in
 * 256 of a stripe: one position in 256 on one thread) and what share of the time they take (an
 * eviction in batches is a few slow inserts that carry much of the mean).
 *
 * <p>Each timed call includes two {@code nanoTime} reads (tens to hundreds of ns on a virtual
 * machine): compare caches within one run, not with JMH's figures.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms4g -Xmx4g -XX:+AlwaysPreTouch \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.TailProbe \
 *     --cache larder --op get --entries 100000 --calls 4000000 --rounds 5
 * </pre>
 */
public final class TailProbe {
    private TailProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        String name = opts.getOrDefault("cache", "larder");
        String op = opts.getOrDefault("op", "get");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "100000"));
        int calls = Integer.parseInt(opts.getOrDefault("calls", "4000000"));
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "5"));
        long threshold = Long.parseLong(opts.getOrDefault("slow-ns", "2000"));
        int period = Integer.parseInt(opts.getOrDefault("period", "256"));
        boolean insert =
                switch (op) {
                    case "get" -> false;
                    case "insert" -> true;
                    default -> throw new IllegalArgumentException("--op must be get or insert, not " + op);
                };
        if (entries <= 0 || calls <= 0 || rounds <= 0 || period <= 0) {
            throw new IllegalArgumentException("need entries, calls, rounds and period > 0: " + opts);
        }
        String[] keys = Keys.keys(0, entries);
        String[] fresh = insert ? Keys.keys(entries, GetPutBenchmark.insertPoolSize(entries)) : null;
        byte[] insertValue = Keys.value(-1, 256);
        try (BenchCache cache = Caches.create(name, entries, 256)) {
            for (int i = 0; i < entries; i++) {
                cache.put(keys[i], Keys.value(i, 256));
            }
            long x = 0x9E37_79B9_7F4A_7C15L;
            int next = 0;
            long[] latencies = new long[calls];
            for (int round = 1; round <= rounds; round++) {
                long sink = 0;
                for (int i = 0; i < calls; i++) {
                    if (insert) {
                        String key = fresh[next];
                        next = next + 1 == fresh.length ? 0 : next + 1;
                        long start = System.nanoTime();
                        cache.put(key, insertValue);
                        latencies[i] = System.nanoTime() - start;
                    } else {
                        x = Keys.xorshift(x);
                        String key = keys[(int) ((x >>> 1) % entries)];
                        long start = System.nanoTime();
                        byte[] value = cache.get(key);
                        latencies[i] = System.nanoTime() - start;
                        sink += value == null ? -1 : value[0];
                    }
                }
                TailStats s = TailStats.of(latencies, threshold, period);
                System.out.printf(
                        "%s %s N=%,d round %d: mean %,.0f p50 %,d p90 %,d p99 %,d p99.9 %,d ns; %.3f%% of calls over"
                                + " %,d ns, %.1f%% of the time; %,d of those %,d at position %d of every %d (sink %d)%n",
                        name,
                        op,
                        entries,
                        round,
                        s.mean(),
                        s.p50(),
                        s.p90(),
                        s.p99(),
                        s.p999(),
                        100 * s.slowShare(),
                        threshold,
                        100 * s.slowTimeShare(),
                        s.slowAtBusiestPosition(),
                        s.slow(),
                        s.busiestPosition(),
                        period,
                        sink);
            }
        }
    }
}
