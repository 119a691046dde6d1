package dev.larder.simulator.synthetic;

import dev.larder.simulator.Workload;
import dev.larder.simulator.Workload.Requests;
import dev.larder.simulator.trace.TraceCatalog;
import dev.larder.simulator.trace.TraceCatalog.TraceFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The synthetic workloads of {@code ../shared/traces/README.md}, each generated from a seed fixed
 * by its name and cache size:
 *
 * <ul>
 *   <li>{@code zipf-0.8}, {@code zipf-0.99}, {@code zipf-1.2}: Zipf over a key space 10x the cache
 *       size.
 *   <li>{@code loop-1.1x}: a cyclic scan over 1.1x the cache size (LRU gets nothing).
 *   <li>{@code zipf-shift}: Zipf(0.99) over 10x the cache size whose hot set moves to fresh keys
 *       halfway (adaptation).
 *   <li>{@code uniform-2x}: uniform over 2x the cache size; every policy should get about 50%.
 *   <li>{@code corda-loop-corda}: the corda trace, the loop trace, the corda trace again
 *       (recency, then a scan, then recency); needs both traces.
 * </ul>
 */
public final class SyntheticWorkloads {
    private SyntheticWorkloads() {}

    static final List<Integer> SIZES = List.of(1_000, 10_000);
    static final int KEY_SPACE_FACTOR = 10;
    /** Tags the loop phase's keys so they cannot meet corda's 64-bit hashes. */
    static final long LOOP_TAG = 0x4C4F4F5000000000L;

    /** All synthetic workloads; {@code corda-loop-corda} only if the catalog has both traces. */
    public static List<Workload> all(TraceCatalog catalog) {
        List<Workload> all = new ArrayList<>();
        for (double s : new double[] {0.8, 0.99, 1.2}) {
            all.add(new SyntheticWorkload(
                    "zipf-" + s,
                    "Zipf(" + s + ") over 10x the cache size",
                    SIZES,
                    false,
                    (size, requests, seed) ->
                            Requests.single(zipf(s, (long) KEY_SPACE_FACTOR * size, requests, seed))));
        }
        all.add(new SyntheticWorkload(
                "loop-1.1x",
                "cyclic scan over 1.1x the cache size",
                SIZES,
                false,
                (size, requests, seed) -> Requests.single(loop(Math.round(size * 1.1), requests))));
        all.add(new SyntheticWorkload(
                "zipf-shift",
                "Zipf(0.99) over 10x the cache size; the hot set moves to fresh keys halfway",
                SIZES,
                true,
                SyntheticWorkloads::zipfShift));
        all.add(new SyntheticWorkload(
                "uniform-2x",
                "uniform over 2x the cache size (every policy should give ~50%)",
                SIZES,
                false,
                (size, requests, seed) -> Requests.single(uniform(2L * size, requests, seed))));
        TraceFile corda = catalog.find("corda");
        TraceFile loop = catalog.find("loop");
        if (corda != null && loop != null) {
            all.add(new SyntheticWorkload(
                    "corda-loop-corda",
                    "corda, then loop, then corda again (recency -> scan -> recency)",
                    corda.sizes(),
                    true,
                    (size, requests, seed) -> concatenate(corda, loop, requests)));
        }
        return List.copyOf(all);
    }

    /** {@code requests} draws of Zipf({@code s}) over {@code keySpace} keys. */
    public static long[] zipf(double s, long keySpace, int requests, long seed) {
        ZipfGenerator zipf = new ZipfGenerator(keySpace, s);
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[requests];
        for (int i = 0; i < requests; i++) {
            keys[i] = Keys.mix(zipf.next(random));
        }
        return keys;
    }

    /** {@code 0, 1, ..., length-1, 0, 1, ...} as mixed keys. */
    public static long[] loop(long length, int requests) {
        long[] keys = new long[requests];
        for (int i = 0; i < requests; i++) {
            keys[i] = Keys.mix(i % length);
        }
        return keys;
    }

    /** Uniform draws over {@code keySpace} keys. */
    public static long[] uniform(long keySpace, int requests, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[requests];
        for (int i = 0; i < requests; i++) {
            keys[i] = Keys.mix(random.nextLong(keySpace));
        }
        return keys;
    }

    static Requests zipfShift(int size, int requests, long seed) {
        long keySpace = (long) KEY_SPACE_FACTOR * size;
        ZipfGenerator zipf = new ZipfGenerator(keySpace, 0.99);
        SplittableRandom random = new SplittableRandom(seed);
        int half = SyntheticWorkload.REQUESTS / 2;
        long[] keys = new long[requests];
        for (int i = 0; i < requests; i++) {
            // Second half: the same distribution over ranks keySpace+1 .. 2*keySpace, fresh keys.
            long rank = zipf.next(random) + (i < half ? 0 : keySpace);
            keys[i] = Keys.mix(rank);
        }
        return new Requests(keys, requests > half ? new long[] {0, half} : new long[] {0});
    }

    static Requests concatenate(TraceFile corda, TraceFile loop, int limit) {
        try {
            long[] c = corda.load(Long.MAX_VALUE);
            long[] l = loop.load(Long.MAX_VALUE);
            long total = Math.min(limit, 2L * c.length + l.length);
            long[] keys = new long[(int) total];
            int n = 0;
            for (int i = 0; i < c.length && n < total; i++) {
                keys[n++] = c[i];
            }
            for (int i = 0; i < l.length && n < total; i++) {
                keys[n++] = LOOP_TAG ^ l[i];
            }
            for (int i = 0; i < c.length && n < total; i++) {
                keys[n++] = c[i];
            }
            long[] starts = {0, c.length, (long) c.length + l.length};
            int phases = 1;
            while (phases < starts.length && starts[phases] < total) {
                phases++;
            }
            return new Requests(keys, java.util.Arrays.copyOf(starts, phases));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
