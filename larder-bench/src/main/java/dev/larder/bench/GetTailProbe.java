package dev.larder.bench;

import java.util.Map;
import java.util.Set;

/**
 * Times GETs one by one to find what a cache's slow GETs are: fills a cache with N entries (16-byte
 * keys, 256-byte values), then times uniformly random hits with {@link System#nanoTime()} around
 * each call and prints {@link TailStats} per round. JMH's SampleTime gives the percentiles, not
 * where the slow calls sit; this does, e.g. whether they are Larder's reader drain (every 256 reads
 * of a stripe, so one position in 256 on one thread).
 *
 * <p>Each timed call includes two {@code nanoTime} reads (tens to hundreds of ns on a virtual
 * machine): compare caches within one run, not with JMH's figures.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms4g -Xmx4g -XX:+AlwaysPreTouch \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.GetTailProbe \
 *     --cache larder --entries 100000 --calls 4000000 --rounds 5
 * </pre>
 */
public final class GetTailProbe {
    private GetTailProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        String name = opts.getOrDefault("cache", "larder");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "100000"));
        int calls = Integer.parseInt(opts.getOrDefault("calls", "4000000"));
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "5"));
        long threshold = Long.parseLong(opts.getOrDefault("slow-ns", "2000"));
        int period = Integer.parseInt(opts.getOrDefault("period", "256"));
        String[] keys = Keys.keys(0, entries);
        try (BenchCache cache = Caches.create(name, entries, 256)) {
            for (int i = 0; i < entries; i++) {
                cache.put(keys[i], Keys.value(i, 256));
            }
            long x = 0x9E37_79B9_7F4A_7C15L;
            long[] latencies = new long[calls];
            for (int round = 1; round <= rounds; round++) {
                long sink = 0;
                for (int i = 0; i < calls; i++) {
                    x ^= x << 13;
                    x ^= x >>> 7;
                    x ^= x << 17;
                    String key = keys[(int) ((x >>> 1) % entries)];
                    long start = System.nanoTime();
                    byte[] value = cache.get(key);
                    latencies[i] = System.nanoTime() - start;
                    sink += value == null ? -1 : value[0];
                }
                TailStats s = TailStats.of(latencies, threshold, period);
                System.out.printf(
                        "%s N=%,d round %d: p50 %,d p90 %,d p99 %,d p99.9 %,d ns; %.3f%% of calls over %,d ns,"
                                + " %,d of those %,d at position %d of every %d (sink %d)%n",
                        name,
                        entries,
                        round,
                        s.p50(),
                        s.p90(),
                        s.p99(),
                        s.p999(),
                        100 * s.slowShare(),
                        threshold,
                        s.slowAtBusiestPosition(),
                        s.slow(),
                        s.busiestPosition(),
                        period,
                        sink);
            }
        }
    }
}
