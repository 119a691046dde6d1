package dev.larder.bench;

import java.io.PrintStream;
import java.util.Map;
import java.util.Set;

/**
 * How a cache's inserts speed up from a fresh JVM: fills a cache with N entries (16-byte keys,
 * 256-byte values), then inserts fresh keys (so it evicts, as in {@code GetPutBenchmark.putInsert})
 * for a number of slices of fixed time and prints the mean ns per insert of each slice; then does
 * the same with another new cache in the same JVM, and so on. The first cache's row is the JIT's
 * warm-up together with the cache's own; the later rows, code already compiled, are the cache's
 * alone. A JMH run with a short warm-up measures its first seconds, which is where this looks.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -Xms4g -Xmx4g \
 *     -cp larder-bench/target/benchmarks.jar dev.larder.bench.WarmUpProbe \
 *     --cache larder --entries 10000 --caches 3 --slices 12 --slice-ms 250
 * </pre>
 *
 * (Add the cache's own JVM flags for a peer: {@code java -cp larder-bench/target/benchmarks.jar
 * dev.larder.bench.Peer ohc} prints them.)
 */
public final class WarmUpProbe {
    private WarmUpProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        run(
                opts.getOrDefault("cache", "larder"),
                Integer.parseInt(opts.getOrDefault("entries", "10000")),
                Integer.parseInt(opts.getOrDefault("caches", "3")),
                Integer.parseInt(opts.getOrDefault("slices", "12")),
                Long.parseLong(opts.getOrDefault("slice-ms", "250")),
                System.out);
    }

    /** Prints one row per cache: its name, its number, and each slice's ns per insert. */
    static void run(String name, int entries, int caches, int slices, long sliceMillis, PrintStream out) {
        String[] fresh = Keys.keys(entries, GetPutBenchmark.insertPoolSize(entries));
        byte[] value = Keys.value(-1, 256);
        long sliceNanos = sliceMillis * 1_000_000;
        int next = 0;
        for (int c = 0; c < caches; c++) {
            StringBuilder row =
                    new StringBuilder(name).append(" cache ").append(c).append(" ns/insert:");
            try (BenchCache cache = Caches.create(name, entries, 256)) {
                String[] keys = Keys.keys(0, entries);
                for (int i = 0; i < entries; i++) {
                    cache.put(keys[i], Keys.value(i, 256));
                }
                for (int s = 0; s < slices; s++) {
                    long start = System.nanoTime();
                    long puts = 0;
                    long elapsed;
                    do {
                        for (int k = 0; k < 64; k++) { // the clock read once per 64 puts
                            cache.put(fresh[next], value);
                            next = next + 1 == fresh.length ? 0 : next + 1;
                        }
                        puts += 64;
                        elapsed = System.nanoTime() - start;
                    } while (elapsed < sliceNanos);
                    row.append(' ').append(elapsed / puts);
                }
            }
            out.println(row);
        }
    }
}
