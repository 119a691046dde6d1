package dev.larder.bench;

import java.util.Map;
import java.util.Set;

/**
 * What inserting new keys costs right after every entry of a full cache was read: fills a cache
 * with N entries (16-byte keys, 256-byte values), reads every key once (as {@code
 * GetPutBenchmark}'s set-up does when it checks the fill), then inserts fresh keys in chunks and
 * prints each chunk's mean time per insert. In a cache that gives read records a second chance
 * when the evictor reaches them (Larder, a CLOCK-like policy on a log), the first evictions meet
 * only such records; JMH averages that phase into its first iterations, this shows how long it
 * lasts and what it costs. {@code --no-reads} skips the reads, for the baseline. Before the timed
 * phase the same steps run {@code --warmups} times (default 3) on a 50,000-entry cache, so that
 * the first chunks do not time the compiler.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms14g -Xmx14g \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.ReadThenInsertProbe \
 *     --cache larder --entries 10000000 --inserts 2000000 --chunks 20
 * </pre>
 */
public final class ReadThenInsertProbe {
    private ReadThenInsertProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of("no-reads"));
        String name = opts.getOrDefault("cache", "larder");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "1000000"));
        int inserts = Integer.parseInt(opts.getOrDefault("inserts", String.valueOf(entries)));
        int chunks = Integer.parseInt(opts.getOrDefault("chunks", "20"));
        boolean reads = !opts.containsKey("no-reads");
        if (entries <= 0 || inserts <= 0 || chunks <= 0 || chunks > inserts) {
            throw new IllegalArgumentException("need entries > 0 and 0 < chunks <= inserts: " + opts);
        }
        int warmups = Integer.parseInt(opts.getOrDefault("warmups", "3"));
        // The same steps on a small cache first, so that the code is compiled before the timed
        // phase (else the first chunks time the JIT as well).
        for (int w = 0; w < warmups; w++) {
            int small = 50_000;
            try (BenchCache cache = Caches.create(name, small, 256)) {
                fillReadInsert(cache, Keys.keys(1L << 40, small), Keys.keys((1L << 40) + small, 2 * small), true, 1);
            }
        }
        String[] keys = Keys.keys(0, entries);
        String[] fresh = Keys.keys(entries, inserts);
        try (BenchCache cache = Caches.create(name, entries, 256)) {
            Chunks timed = fillReadInsert(cache, keys, fresh, reads, chunks);
            long[] nanos = timed.nanos();
            int[] counts = timed.counts();
            int present = timed.present();
            System.out.printf(
                    "%s N=%,d, %s, then %,d inserts of new keys%n",
                    name, entries, reads ? "every key read once (" + present + " present)" : "no reads", inserts);
            System.out.println("inserts so far    ns per insert in the chunk");
            for (int c = 0, done = 0; c < chunks; c++) {
                done += counts[c];
                System.out.printf("%,14d    %,.0f%n", done, (double) nanos[c] / counts[c]);
            }
            System.out.printf("extra time over the last chunk's rate: %.2f s%n", ProbeMath.extraSeconds(nanos, counts));
        }
    }

    /** Each chunk's time and number of inserts, and how many keys the read found. */
    private record Chunks(long[] nanos, int[] counts, int present) {}

    /**
     * Puts {@code keys}, reads each once (if {@code reads}; the count found, else -1), then puts
     * {@code fresh} in {@code chunks} chunks, each timed.
     */
    private static Chunks fillReadInsert(BenchCache cache, String[] keys, String[] fresh, boolean reads, int chunks) {
        for (int i = 0; i < keys.length; i++) {
            cache.put(keys[i], Keys.value(i, 256));
        }
        int present = reads ? Fill.countPresent(cache, keys) : -1;
        byte[] value = Keys.value(0, 256);
        long[] nanos = new long[chunks];
        int[] counts = new int[chunks];
        for (int c = 0; c < chunks; c++) {
            int from = (int) ((long) fresh.length * c / chunks);
            int to = (int) ((long) fresh.length * (c + 1) / chunks);
            long start = System.nanoTime();
            for (int i = from; i < to; i++) {
                cache.put(fresh[i], value);
            }
            nanos[c] = System.nanoTime() - start;
            counts[c] = to - from;
        }
        return new Chunks(nanos, counts, present);
    }
}
