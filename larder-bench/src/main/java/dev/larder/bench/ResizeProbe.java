package dev.larder.bench;

import java.util.Map;
import java.util.Set;

/**
 * What overwrites that change the value's length cost once a cache is in its steady state: fills
 * a cache with N entries (16-byte keys, 256-byte values), then overwrites uniformly random keys
 * with values whose lengths take turns among {@code GetPutBenchmark.putResize}'s eight (3/4 to
 * 5/4 of 256 bytes), in rounds, and prints each round's mean time per put and how many of the N
 * keys are still present. A log-structured cache appends a record for each such overwrite and
 * must clean its log (or evict) to make room; the rounds show where that settles, and whether
 * entries are lost on the way. One thread.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms4g -Xmx4g \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.ResizeProbe \
 *     --cache larder --entries 10000 --puts 2000000 --rounds 10
 * </pre>
 *
 * <p>Larder's budget is {@code -Dlarder.bench.room=F} times the estimator's recommendation (1 by
 * default, see {@code LarderAdapter}).
 */
public final class ResizeProbe {
    private ResizeProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        String name = opts.getOrDefault("cache", "larder");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "10000"));
        long puts = Long.parseLong(opts.getOrDefault("puts", "2000000"));
        int rounds = Integer.parseInt(opts.getOrDefault("rounds", "10"));
        if (entries <= 0 || puts <= 0 || rounds <= 0) {
            throw new IllegalArgumentException("need entries, puts and rounds > 0: " + opts);
        }
        String[] keys = Keys.keys(0, entries);
        byte[][] values = new byte[GetPutBenchmark.RESIZE_SIZES][];
        for (int i = 0; i < values.length; i++) {
            values[i] = Keys.value(i, GetPutBenchmark.resizedLength(256, i));
        }
        try (BenchCache cache = Caches.create(name, entries, 256)) {
            for (int i = 0; i < entries; i++) {
                cache.put(keys[i], Keys.value(i, 256));
            }
            System.out.printf(
                    "%s N=%,d, %,d overwrites per round of lengths %d to %d bytes%n",
                    name, entries, puts, values[0].length, values[values.length - 1].length);
            System.out.println("round    ns per put    keys present");
            long x = 0x9E3779B97F4A7C15L;
            int turn = 0;
            for (int r = 0; r < rounds; r++) {
                long start = System.nanoTime();
                for (long p = 0; p < puts; p++) {
                    x = Keys.xorshift(x);
                    cache.put(keys[(int) Long.remainderUnsigned(x, entries)], values[turn++ & (values.length - 1)]);
                }
                long nanos = System.nanoTime() - start;
                System.out.printf("%5d    %,10.0f    %,d%n", r, (double) nanos / puts, Fill.countPresent(cache, keys));
            }
        }
    }
}
