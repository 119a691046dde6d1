package dev.larder.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.function.Supplier;

/**
 * Caches measured side by side in one JVM: slices of a few hundred milliseconds of the same
 * operation, each cache in turn, round after round, so that every round's caches ran within a
 * second of each other and a change in the machine's speed moves all of them.
 *
 * <p>Why: on the 2-core guests these benchmarks ran on, a fork's speed steps between two or three
 * levels for seconds to tens of seconds at a time, for every cache (two threads' inserts at 100K:
 * Larder ~310 or ~730-780 ns, OHC ~400, ~500-560 or ~850, in the same minutes),
 * and a probe run between forks does not always see it (docs/speed-work.md, fifty-seventh
 * session). Forks minutes apart, as in the published run, then compare the levels the caches
 * drew as much as the caches. A round's ratio here compares them on one level.
 *
 * <pre>
 * larder-bench/side-by-side.sh --caches larder,ohc --op insert --entries 100000 --threads 2
 * </pre>
 *
 * <p>Options: {@code --caches} (two or more, the first is the reference of the ratios), {@code
 * --op} get, overwrite or insert (as {@link GetPutBenchmark}'s get, putOverwrite and putInsert:
 * uniformly random present keys, or fresh keys from a pool of {@link
 * GetPutBenchmark#insertPoolSize}), {@code --entries}, {@code --value-bytes} (256), {@code
 * --threads} (1), {@code --slice-ms} (500), {@code --rounds} (20, measured), {@code
 * --warmup-rounds} (6, not reported: the JIT's warm-up), {@code --out} (a JSON file of the
 * rounds, for {@code report.py}), {@code --cache-props} (system properties for one cache's
 * build, to compare two Larders that differ in a switch: {@link #cacheProps}). The caches run in one order in even
 * rounds and in the reverse order in odd ones. Prints each round's ns/op per cache (as JMH's
 * AverageTime: the threads' time over their operations) and, per cache after the first, the
 * median of the rounds' ratios to the first with a 90% bootstrap interval. The JVM needs every
 * cache's flags ({@code Peer --all}); the script passes them.
 */
public final class SideBySideProbe {
    private SideBySideProbe() {}

    /** The operations measured. */
    enum Op {
        GET,
        OVERWRITE,
        INSERT;

        static Op of(String name) {
            return switch (name) {
                case "get" -> GET;
                case "overwrite" -> OVERWRITE;
                case "insert" -> INSERT;
                default -> throw new IllegalArgumentException("--op must be get, overwrite or insert: " + name);
            };
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = ProbeArgs.parse(args, Set.of());
        Op op = Op.of(o.getOrDefault("op", "get"));
        List<String> names = new ArrayList<>();
        for (String name : o.getOrDefault("caches", "larder,ohc").split(",")) {
            if (op == Op.INSERT && !Peer.of(name).evicts()) {
                System.err.println(
                        name + " left out: it does not evict, so inserting past its capacity does not apply");
            } else {
                names.add(name);
            }
        }
        if (names.size() < 2) {
            throw new IllegalArgumentException("--caches needs two or more caches (that evict, for insert): " + names);
        }
        List<String> labels = labels(names);
        int entries = Integer.parseInt(o.getOrDefault("entries", "100000"));
        int valueBytes = Integer.parseInt(o.getOrDefault("value-bytes", "256"));
        int threads = Integer.parseInt(o.getOrDefault("threads", "1"));
        long sliceMs = Long.parseLong(o.getOrDefault("slice-ms", "500"));
        int rounds = Integer.parseInt(o.getOrDefault("rounds", "20"));
        int warmup = Integer.parseInt(o.getOrDefault("warmup-rounds", "6"));
        if (entries < 1 || valueBytes < 1 || threads < 1 || sliceMs < 1 || rounds < 1 || warmup < 0) {
            throw new IllegalArgumentException("--entries, --value-bytes, --threads, --slice-ms and --rounds must be"
                    + " positive, --warmup-rounds not negative: " + o);
        }

        String[] keys = Keys.keys(0, entries);
        String[] insertKeys = op == Op.INSERT ? Keys.keys(entries, GetPutBenchmark.insertPoolSize(entries)) : null;
        List<BenchCache> caches = new ArrayList<>();
        try {
            List<Map<String, String>> props = cacheProps(o.getOrDefault("cache-props", ""), names.size());
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                if (!props.get(i).isEmpty()) {
                    System.out.println(labels.get(i) + " is built with " + props.get(i));
                }
                BenchCache c = withProperties(props.get(i), () -> Caches.create(name, entries, valueBytes));
                caches.add(c);
                Fill.fill(c, name, keys, valueBytes);
            }
            System.out.printf(
                    Locale.ROOT,
                    "side by side: %s, op %s, %d entries of %d-byte values, %d thread(s), slices of %d ms, %d rounds after %d%n",
                    String.join(" ", labels),
                    op.name().toLowerCase(Locale.ROOT),
                    entries,
                    valueBytes,
                    threads,
                    sliceMs,
                    rounds,
                    warmup);
            double[][] nsPerOp =
                    new Slices(caches, op, keys, insertKeys, valueBytes, threads).run(sliceMs, warmup, rounds, labels);
            System.out.print(summary(labels, nsPerOp));
            String out = o.get("out");
            if (out != null) {
                Map<String, Object> settings = new LinkedHashMap<>();
                settings.put("op", op.name().toLowerCase(Locale.ROOT));
                settings.put("entries", entries);
                settings.put("valueBytes", valueBytes);
                settings.put("threads", threads);
                settings.put("sliceMs", sliceMs);
                settings.put("rounds", rounds);
                settings.put("warmupRounds", warmup);
                Files.writeString(Path.of(out), Json.write(toJson(settings, labels, nsPerOp)) + "\n");
            }
        } finally {
            for (BenchCache c : caches) {
                c.close();
            }
        }
    }

    /**
     * The caches' names, a repeated one numbered from its second time ({@code larder, larder#2}): a
     * cache against a second instance of itself is the probe's own check, whose ratio should be
     * 1 within its interval.
     */
    /**
     * {@code --cache-props}: system properties set only while the cache at a 1-based position of
     * {@code --caches} is built, {@code 2:larder.bench.partitions=2;2:larder.bench.room=1.5}. A
     * switch read when a cache is built (the {@code larder.bench.*} switches of {@link
     * LarderAdapter}, or an experiment's) can then be compared with two Larders in one JVM:
     * {@code --caches larder,larder --cache-props 2:...}, each round's ratio taken on the
     * machine's same level.
     */
    static List<Map<String, String>> cacheProps(String spec, int caches) {
        List<Map<String, String>> props = new ArrayList<>();
        for (int i = 0; i < caches; i++) {
            props.add(new TreeMap<>());
        }
        for (String item : spec.split(";")) {
            if (item.isBlank()) {
                continue;
            }
            int colon = item.indexOf(':');
            int equals = item.indexOf('=', colon + 1);
            if (colon < 1 || equals < colon + 2) {
                throw new IllegalArgumentException(
                        "--cache-props items must be position:key=value, e.g. 2:larder.bench.partitions=2: " + item);
            }
            int position;
            try {
                position = Integer.parseInt(item.substring(0, colon).trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--cache-props: not a cache position: " + item, e);
            }
            if (position < 1 || position > caches) {
                throw new IllegalArgumentException(
                        "--cache-props: position " + position + " is not one of the " + caches + " caches: " + item);
            }
            props.get(position - 1).put(item.substring(colon + 1, equals).trim(), item.substring(equals + 1));
        }
        return props;
    }

    /** Builds with {@code props} set as system properties, then puts back what they were. */
    static <T> T withProperties(Map<String, String> props, Supplier<T> build) {
        Map<String, String> before = new HashMap<>();
        props.forEach((key, value) -> before.put(key, System.setProperty(key, value)));
        try {
            return build.get();
        } finally {
            before.forEach((key, value) -> {
                if (value == null) {
                    System.clearProperty(key);
                } else {
                    System.setProperty(key, value);
                }
            });
        }
    }

    static List<String> labels(List<String> names) {
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            int seen = 1;
            for (int j = 0; j < i; j++) {
                if (names.get(j).equals(names.get(i))) {
                    seen++;
                }
            }
            labels.add(seen == 1 ? names.get(i) : names.get(i) + "#" + seen);
        }
        return labels;
    }

    /**
     * The run as JSON: {@code settings}, then {@code caches} (each with its rounds' ns/op and their
     * median) and {@code ratios} (each cache after the first against it: median, low, high).
     */
    static Map<String, Object> toJson(Map<String, Object> settings, List<String> names, double[][] nsPerOp) {
        Map<String, Object> json = new LinkedHashMap<>(settings);
        Map<String, Object> caches = new LinkedHashMap<>();
        for (int c = 0; c < names.size(); c++) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("median", median(nsPerOp[c]));
            one.put("nsPerOp", Arrays.stream(nsPerOp[c]).boxed().toList());
            caches.put(names.get(c), one);
        }
        json.put("caches", caches);
        Map<String, Object> ratios = new LinkedHashMap<>();
        for (int c = 1; c < names.size(); c++) {
            double[] m = medianInterval(ratios(nsPerOp[c], nsPerOp[0]));
            Map<String, Object> ratio = new LinkedHashMap<>();
            ratio.put("median", m[0]);
            ratio.put("low", m[1]);
            ratio.put("high", m[2]);
            ratios.put(names.get(c), ratio);
        }
        json.put("reference", names.get(0));
        json.put("ratios", ratios);
        return json;
    }

    /** Each round's {@code a[r] / b[r]}. */
    static double[] ratios(double[] a, double[] b) {
        double[] r = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[i] / b[i];
        }
        return r;
    }

    /**
     * The order of {@code n} caches in round {@code round}: as given in even rounds, reversed in
     * odd ones, so that neither cache always runs first after the other.
     */
    static int[] order(int round, int n) {
        int[] o = new int[n];
        for (int i = 0; i < n; i++) {
            o[i] = round % 2 == 0 ? i : n - 1 - i;
        }
        return o;
    }

    /** The median of {@code xs} (not modified). */
    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /**
     * The median of {@code xs} and a 90% bootstrap interval of it: {median, low, high}, from 4,000
     * resamples with a fixed seed (the same figures always print the same interval).
     */
    static double[] medianInterval(double[] xs) {
        Random rng = new Random(1);
        int resamples = 4000;
        double[] meds = new double[resamples];
        double[] sample = new double[xs.length];
        for (int r = 0; r < resamples; r++) {
            for (int i = 0; i < xs.length; i++) {
                sample[i] = xs[rng.nextInt(xs.length)];
            }
            meds[r] = median(sample);
        }
        Arrays.sort(meds);
        return new double[] {median(xs), meds[(int) (0.05 * resamples)], meds[(int) (0.95 * resamples) - 1]};
    }

    /**
     * What the rounds say: each cache's median ns/op, and for each cache after the first the median
     * of its rounds' ratios to the first (above 1: the first is faster) with its interval.
     * {@code nsPerOp[cache][round]}.
     */
    static String summary(List<String> names, double[][] nsPerOp) {
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < names.size(); c++) {
            sb.append(String.format(Locale.ROOT, "%s: median %.1f ns/op%n", names.get(c), median(nsPerOp[c])));
        }
        int rounds = nsPerOp[0].length;
        for (int c = 1; c < names.size(); c++) {
            double[] m = medianInterval(ratios(nsPerOp[c], nsPerOp[0]));
            String verdict = rounds < 3
                    ? "too few rounds for a verdict"
                    : m[1] > 1
                            ? names.get(0) + " faster"
                            : m[2] < 1 ? names.get(c) + " faster" : "no difference resolved";
            sb.append(String.format(
                    Locale.ROOT,
                    "%s / %s: median %.3f  90%% interval [%.3f, %.3f]  (%d rounds): %s%n",
                    names.get(c),
                    names.get(0),
                    m[0],
                    m[1],
                    m[2],
                    rounds,
                    verdict));
        }
        return sb.toString();
    }

    /** The worker threads and the slices they run, one cache at a time. */
    static final class Slices {
        private final List<BenchCache> caches;
        private final Op op;
        private final String[] keys;
        private final String[] insertKeys;
        private final int threads;
        private final Worker[] workers;
        private final CyclicBarrier start;
        private final CyclicBarrier end;
        private volatile boolean stop;
        private volatile int current;
        private volatile boolean finished;

        Slices(List<BenchCache> caches, Op op, String[] keys, String[] insertKeys, int valueBytes, int threads) {
            this.caches = caches;
            this.op = op;
            this.keys = keys;
            this.insertKeys = insertKeys;
            this.threads = threads;
            this.start = new CyclicBarrier(threads + 1);
            this.end = new CyclicBarrier(threads + 1);
            this.workers = new Worker[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Worker(t, caches.size(), Keys.value(-1 - t, valueBytes));
            }
        }

        /**
         * Runs {@code warmup} rounds unreported, then {@code rounds} rounds, printing each; returns
         * {@code nsPerOp[cache][round]} of the measured ones.
         */
        double[][] run(long sliceMs, int warmup, int rounds, List<String> names) throws Exception {
            List<Thread> running = new ArrayList<>();
            for (Worker w : workers) {
                Thread t = new Thread(w, "side-by-side-" + w.index);
                t.setDaemon(true);
                t.start();
                running.add(t);
            }
            double[][] ns = new double[caches.size()][rounds];
            try {
                for (int r = 0; r < warmup + rounds; r++) {
                    StringBuilder line = new StringBuilder(r < warmup ? "warm-up" : "round " + (r - warmup + 1));
                    double[] thisRound = new double[caches.size()];
                    for (int c : order(r, caches.size())) {
                        thisRound[c] = slice(c, sliceMs);
                    }
                    for (int c = 0; c < caches.size(); c++) {
                        line.append(String.format(Locale.ROOT, "  %s %.1f", names.get(c), thisRound[c]));
                        if (r >= warmup) {
                            ns[c][r - warmup] = thisRound[c];
                        }
                    }
                    System.out.println(line);
                }
                finished = true;
                start.await(); // the workers pass the barrier once more, see finished and leave
            } finally {
                if (!finished) {
                    finished = true;
                    start.reset(); // a failed run: the workers waiting at the barrier leave
                }
                for (Thread t : running) {
                    t.join(10_000);
                }
            }
            return ns;
        }

        /** One slice of cache {@code c}: the threads' ns per operation. */
        private double slice(int c, long sliceMs) throws Exception {
            current = c;
            stop = false;
            start.await();
            Thread.sleep(sliceMs);
            stop = true;
            end.await();
            long nanos = 0;
            long ops = 0;
            for (Worker w : workers) {
                nanos += w.nanos;
                ops += w.ops;
            }
            if (ops == 0) {
                throw new IllegalStateException("no operation finished in a slice of " + sliceMs + " ms");
            }
            return (double) nanos / ops;
        }

        /** One thread: runs the operation on the slice's cache until told to stop. */
        final class Worker implements Runnable {
            final int index;
            final byte[] value;
            long seed;
            /** Per cache: the next insert key, this thread's share of the pool (as GetPutBenchmark's). */
            final int[] insertNext;

            long nanos;
            long ops;
            /** The GETs' value lengths, summed: the values are used, as JMH's Blackhole would. */
            long sink;

            Worker(int index, int caches, byte[] value) {
                this.index = index;
                this.value = value;
                this.seed = 0x9E3779B97F4A7C15L * (index + 1);
                this.insertNext = new int[caches];
                Arrays.fill(insertNext, index);
            }

            @Override
            public void run() {
                try {
                    while (true) {
                        start.await();
                        if (finished) {
                            return;
                        }
                        BenchCache cache = caches.get(current);
                        long n = 0;
                        long t0 = System.nanoTime();
                        while (!stop) {
                            for (int i = 0; i < 64; i++) {
                                step(cache);
                            }
                            n += 64;
                        }
                        nanos = System.nanoTime() - t0;
                        ops = n;
                        end.await();
                    }
                } catch (InterruptedException | BrokenBarrierException e) {
                    // the run is over (reset) or was interrupted
                }
            }

            private void step(BenchCache cache) {
                switch (op) {
                    case GET -> {
                        byte[] v = cache.get(keys[nextIndex()]);
                        sink += v == null ? 0 : v.length;
                    }
                    case OVERWRITE -> cache.put(keys[nextIndex()], value);
                    case INSERT -> {
                        int c = current;
                        int i = insertNext[c];
                        int next = i + threads;
                        insertNext[c] = next >= insertKeys.length ? next - insertKeys.length : next;
                        cache.put(insertKeys[i], value);
                    }
                }
            }

            private int nextIndex() {
                seed = Keys.xorshift(seed);
                return Keys.indexBelow(seed, keys.length);
            }
        }
    }
}
