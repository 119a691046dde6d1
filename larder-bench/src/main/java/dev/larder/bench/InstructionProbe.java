package dev.larder.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * The program {@code larder-bench/instructions.sh} runs under valgrind to count the instructions
 * one call of a cache takes: fills a cache with N entries (16-byte keys, {@code --value-bytes}
 * values, 256 unless given), makes
 * {@code --warmup} calls (so that the JIT has compiled the path), then {@code --calls} more
 * between two marks ({@code Thread.yield}, at whose {@code sched_yield} callgrind dumps its
 * counts), so that the caller's part between the marks is the measured calls alone.
 *
 * <p>Unlike a time, an instruction count is the same run after run on a machine shared with other
 * jobs, so it resolves a change of a few percent in one pair of runs; it says nothing about cache
 * misses or waits (a path can get shorter and slower), so a change it finds still needs a timed
 * A/B ({@code larder-bench/ab.sh}).
 *
 * <p>{@code --op get} reads uniformly random present keys; {@code overwrite} puts a fixed value
 * under uniformly random present keys; {@code insert} puts fresh keys in turn from {@code
 * GetPutBenchmark.putInsert}'s pool, so the cache evicts at every insert. Each operation's loop is
 * a method of its own, so the probe adds the same few instructions per call to every cache.
 */
public final class InstructionProbe {
    private InstructionProbe() {}

    public static void main(String[] args) {
        Map<String, String> opts = ProbeArgs.parse(args, Set.of());
        String name = opts.getOrDefault("cache", "larder");
        String op = opts.getOrDefault("op", "get");
        int entries = Integer.parseInt(opts.getOrDefault("entries", "10000"));
        long warmup = Long.parseLong(opts.getOrDefault("warmup", "300000"));
        long calls = Long.parseLong(opts.getOrDefault("calls", "1000000"));
        int valueBytes = Integer.parseInt(opts.getOrDefault("value-bytes", "256"));
        if (entries <= 0 || warmup < 0 || calls < 0 || valueBytes <= 0) {
            throw new IllegalArgumentException("need entries and value-bytes > 0, warmup and calls >= 0: " + opts);
        }
        Calls run =
                switch (op) {
                    case "get" -> InstructionProbe::gets;
                    case "overwrite" -> InstructionProbe::overwrites;
                    case "insert" -> InstructionProbe::inserts;
                    default -> throw new IllegalArgumentException("--op must be get, overwrite or insert, not " + op);
                };
        String[] keys = Keys.keys(0, entries);
        Workload w = new Workload(
                keys,
                op.equals("insert") ? Keys.keys(entries, GetPutBenchmark.insertPoolSize(entries)) : null,
                Keys.value(-1, valueBytes));
        try (BenchCache cache = Caches.create(name, entries, valueBytes)) {
            for (int i = 0; i < entries; i++) {
                cache.put(keys[i], Keys.value(i, valueBytes));
            }
            long sink = run.calls(cache, w, warmup);
            writePerfMap();
            // The marks: instructions.sh has callgrind dump its counts at every sched_yield, which
            // Thread.yield calls, so the part between these two is the measured calls alone.
            Thread.yield();
            sink += run.calls(cache, w, calls);
            Thread.yield();
            System.out.println(name + " " + op + " " + entries + ": " + calls + " calls measured (" + sink + ")");
        }
    }

    /**
     * Writes the JIT's perf map now ({@code /tmp/perf-<pid>.map}, as {@code jcmd <pid>
     * Compiler.perfmap} would), before the marks: some JVMs crash under valgrind after the measured
     * calls (Caffeine's eviction did, on JDK 25.0.3), and the map that {@code
     * -XX:+DumpPerfMapAtExit} writes at a normal exit would then be missing. The code the
     * measured calls run was compiled during the warm-up ({@code -Xbatch}).
     */
    static void writePerfMap() {
        // jcmd in a process of its own: the dcmd then runs in the VM's attach listener, with no
        // class loading in this one (the platform MBean server's, in-process, made the JIT's
        // code crash under valgrind).
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        try {
            Process p = new ProcessBuilder(
                            jcmd, Long.toString(ProcessHandle.current().pid()), "Compiler.perfmap")
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (p.waitFor() != 0) {
                System.err.println("InstructionProbe: jcmd Compiler.perfmap exited with " + p.exitValue());
            }
        } catch (IOException e) {
            System.err.println("InstructionProbe: no perf map written before the marks: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Keys, the insert pool and the value, with each generator's position. */
    static final class Workload {
        final String[] keys;
        final String[] fresh;
        final byte[] value;
        long seed = 0x9E37_79B9_7F4A_7C15L;
        int next;

        Workload(String[] keys, String[] fresh, byte[] value) {
            this.keys = keys;
            this.fresh = fresh;
            this.value = value;
        }

        /** A uniformly random index of a present key (xorshift, as {@code GetPutBenchmark}). */
        int nextPresent() {
            seed = Keys.xorshift(seed);
            return Keys.indexBelow(seed, keys.length);
        }

        String nextFresh() {
            String key = fresh[next];
            next = next + 1 == fresh.length ? 0 : next + 1;
            return key;
        }
    }

    @FunctionalInterface
    interface Calls {
        /** Makes {@code n} calls; returns something of their results, so none is dead code. */
        long calls(BenchCache cache, Workload w, long n);
    }

    static long gets(BenchCache cache, Workload w, long n) {
        long sink = 0;
        for (long i = 0; i < n; i++) {
            byte[] v = cache.get(w.keys[w.nextPresent()]);
            sink += v == null ? 1 : v.length;
        }
        return sink;
    }

    static long overwrites(BenchCache cache, Workload w, long n) {
        for (long i = 0; i < n; i++) {
            cache.put(w.keys[w.nextPresent()], w.value);
        }
        return n;
    }

    static long inserts(BenchCache cache, Workload w, long n) {
        for (long i = 0; i < n; i++) {
            cache.put(w.nextFresh(), w.value);
        }
        return n;
    }
}
