// Run from the repository root (builds what it needs, then runs the demo; about a minute):
//
//   ./mvnw -q -Pdemo -pl larder-demo -am -DskipTests package
//
// Options: -Ddemo.args="entries=200000 seconds=2 threads=2 caches=larder,caffeine"
package dev.larder.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Fills Larder and Caffeine with the same million entries, runs the same mixed workload on both,
 * and prints side by side throughput, hit rate, heap used after GC, native memory, bytes per
 * entry, and GC count and pause time.
 *
 * <p>Each cache is measured in a fresh JVM of its own ({@link Run}), started from the same
 * {@code java} binary and class path as this one, so that neither cache's heap or collections
 * show up in the other's figures.
 */
public final class Demo {
    /** Flags of every measured JVM; each cache may add its own ({@link CacheKind#jvmFlags()}). */
    static final List<String> CHILD_JVM_FLAGS = List.of("-Xmx2g", "-XX:+UseG1GC");

    private static final String ERROR_PREFIX = "LARDER-DEMO-ERROR ";

    private Demo() {}

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        Settings settings = Settings.parse(args, rest);
        List<CacheKind> kinds = List.of(CacheKind.LARDER, CacheKind.CAFFEINE);
        for (String word : rest) {
            if (word.startsWith("caches=")) {
                kinds = new ArrayList<>();
                for (String id : word.substring("caches=".length()).split(",")) {
                    kinds.add(CacheKind.byId(id.trim()));
                }
            } else {
                throw new IllegalArgumentException("unknown argument '" + word + "'");
            }
        }

        PrintStream out = System.out;
        printHeader(out, settings);
        Map<CacheKind, Outcome> outcomes = new LinkedHashMap<>();
        for (CacheKind kind : kinds) {
            outcomes.put(kind, fork(kind, settings));
        }
        out.println();
        printTable(out, outcomes);
        if (outcomes.values().stream().anyMatch(o -> o.result == null)) {
            System.exit(1);
        }
    }

    /** What a measured JVM handed back: its result, or why there is none. */
    record Outcome(Result result, String error) {}

    private static Outcome fork(CacheKind kind, Settings settings) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(CHILD_JVM_FLAGS);
        command.addAll(kind.jvmFlags());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Run.class.getName());
        command.add(kind.id());
        command.addAll(settings.toArgs());

        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .start();
        process.getOutputStream().close();
        // A stuck child must not hang the demo: allow generously for the fill, then end it.
        long limitSeconds = 180 + settings.workloadMillis() / 1000 + settings.entries() / 10_000;
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                if (!process.waitFor(limitSeconds, TimeUnit.SECONDS)) {
                    System.err.printf("%s: no result after %d s, stopping it%n", kind.displayName(), limitSeconds);
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                // the child ended and the demo moved on
            }
        });

        Result result = null;
        String error = null;
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith(Result.PREFIX)) {
                    result = Result.parse(line);
                } else if (line.startsWith(ERROR_PREFIX)) {
                    error = line.substring(ERROR_PREFIX.length());
                } else {
                    System.out.println(line);
                }
            }
        }
        int exit = process.waitFor();
        watchdog.interrupt();
        if (result == null && error == null) {
            error = "its JVM exited with code " + exit + " and no result";
        }
        return new Outcome(result, error);
    }

    private static String javaBinary() {
        return ProcessHandle.current().info().command().orElseGet(() -> Path.of(
                        System.getProperty("java.home"), "bin", "java")
                .toString());
    }

    private static void printHeader(PrintStream out, Settings s) {
        out.printf(
                Locale.ROOT,
                "Larder demo: %,d entries (keys like \"%s\", %d-byte values), then %.1f s of %d%% reads /"
                        + " %d%% writes on %d thread(s), Zipf(%.2f) keys over %,d (read-through on a miss).%n",
                s.entries(),
                Workload.key(123456),
                s.valueBytes(),
                s.workloadMillis() / 1000.0,
                s.readPercent(),
                100 - s.readPercent(),
                s.threads(),
                s.zipfExponent(),
                s.keySpace());
        out.printf(
                Locale.ROOT,
                "JDK %s (%s %s), %d cores; each cache in a fresh JVM: %s%n",
                Runtime.version(),
                System.getProperty("java.vm.vendor", "?"),
                System.getProperty("java.vm.name", "?"),
                Runtime.getRuntime().availableProcessors(),
                String.join(" ", CHILD_JVM_FLAGS));
    }

    static void printTable(PrintStream out, Map<CacheKind, Outcome> outcomes) {
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>();
        header.add("");
        for (CacheKind kind : outcomes.keySet()) {
            header.add(kind.displayName());
        }
        rows.add(header.toArray(String[]::new));
        row(rows, outcomes, "Entries held after fill", r -> String.format(Locale.ROOT, "%,d", r.held()));
        row(rows, outcomes, "Fill (puts/s)", r -> String.format(Locale.ROOT, "%,.0f", r.fillPerSecond()));
        row(rows, outcomes, "Mixed workload (ops/s)", r -> String.format(Locale.ROOT, "%,.0f", r.opsPerSecond()));
        row(rows, outcomes, "Hit rate", r -> String.format(Locale.ROOT, "%.2f%%", 100 * r.hitRate()));
        row(rows, outcomes, "Heap used after GC", r -> bytes(r.heapGrowthBytes()));
        row(rows, outcomes, "Native memory", r -> bytes(r.nativeBytes()));
        row(rows, outcomes, "Process RSS growth", r -> r.rssGrowthBytes() < 0 ? "n/a" : bytes(r.rssGrowthBytes()));
        row(rows, outcomes, "Bytes per entry", r -> String.format(Locale.ROOT, "%,.0f", r.bytesPerEntry()));
        row(rows, outcomes, "GC collections", r -> String.format(Locale.ROOT, "%,d", r.gcCount()));
        row(rows, outcomes, "GC pause time", r -> String.format(Locale.ROOT, "%,d ms", r.gcPauseMillis()));
        row(rows, outcomes, "Wrong values read", r -> String.format(Locale.ROOT, "%,d", r.badValues()));

        int labelWidth = rows.stream().mapToInt(r -> r[0].length()).max().orElse(0);
        int columnWidth = 14;
        for (String[] r : rows) {
            for (int i = 1; i < r.length; i++) {
                columnWidth = Math.max(columnWidth, r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            line.append(r[0]).append(" ".repeat(labelWidth - r[0].length()));
            for (int i = 1; i < r.length; i++) {
                line.append("   ")
                        .append(" ".repeat(columnWidth - r[i].length()))
                        .append(r[i]);
            }
            out.println(line);
        }
        out.println();
        out.println("Heap = live Java heap after a full GC, over the empty JVM's; native = off-heap memory held"
                + " (Larder's memoryUsed()); bytes per entry = (heap + native) / entries held; RSS and memory are"
                + " measured right after the fill; GC figures cover the fill and the workload, not the demo's"
                + " own System.gc() calls.");
        for (var e : outcomes.entrySet()) {
            if (e.getValue().result == null) {
                out.println(e.getKey().displayName() + " failed: " + e.getValue().error);
            }
        }
    }

    private static void row(
            List<String[]> rows, Map<CacheKind, Outcome> outcomes, String label, Function<Result, String> cell) {
        List<String> r = new ArrayList<>();
        r.add(label);
        for (Outcome o : outcomes.values()) {
            r.add(o.result == null ? "failed" : cell.apply(o.result));
        }
        rows.add(r.toArray(String[]::new));
    }

    /** Binary units with one decimal: {@code 412.3 MiB}. */
    static String bytes(long n) {
        long abs = Math.abs(n);
        if (abs < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n / 1024.0;
        int u = 0;
        while (Math.abs(v) >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /**
     * A measured JVM: {@code Demo$Run <larder|caffeine> [entries=N seconds=S ...]}. Prints progress
     * to standard error and its {@link Result} as one line to standard output.
     */
    public static final class Run {
        private Run() {}

        public static void main(String[] args) {
            if (args.length == 0) {
                System.err.println("usage: Demo$Run <larder|caffeine> [entries=N] [seconds=S] [threads=T]");
                System.exit(2);
            }
            try {
                CacheKind kind = CacheKind.byId(args[0]);
                List<String> rest = new ArrayList<>();
                Settings settings = Settings.parse(java.util.Arrays.copyOfRange(args, 1, args.length), rest);
                if (!rest.isEmpty()) {
                    throw new IllegalArgumentException("unknown arguments " + rest);
                }
                Result result = Measurement.run(kind, settings, System.err);
                System.out.println(result.toLine());
                System.out.flush();
            } catch (Throwable t) {
                t.printStackTrace();
                System.out.println(ERROR_PREFIX + t);
                System.out.flush();
                System.exit(1);
            }
        }
    }
}
