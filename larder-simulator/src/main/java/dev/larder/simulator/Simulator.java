package dev.larder.simulator;

import dev.larder.simulator.Run.Outcome;
import dev.larder.simulator.policy.Policy;
import dev.larder.simulator.policy.PolicyType;
import dev.larder.simulator.report.Charts;
import dev.larder.simulator.report.Environment;
import dev.larder.simulator.report.ResultFiles;
import dev.larder.simulator.report.Table;
import dev.larder.simulator.synthetic.SyntheticWorkloads;
import dev.larder.simulator.trace.TraceCatalog;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The trace-driven hit-rate simulator: every workload (the trace files of {@code
 * ../shared/traces} and the synthetic ones) at each of its cache sizes, through every policy
 * (LRU, Caffeine, Larder, Bélády's bound), from a cold cache, counting compulsory misses.
 *
 * <p>Prints a fixed-width table (one row per {@code trace@size}, one column per policy, then
 * Larder minus Caffeine in points, then the mean over all rows) and writes {@code
 * hit-rates.json}, {@code hit-rates.csv}, {@code windows.csv} (hit rate per window of the
 * phase-change workloads), {@code phases.csv}, {@code hit-rates.md} and the SVG charts to the
 * output directory. Run from the repository root:
 *
 * <pre>
 * ./mvnw -q -pl larder-simulator -am -DskipTests -Dsimulate verify
 * ./mvnw -q -pl larder-simulator -am -DskipTests -Dsimulate -Dsimulate.args="--quick --traces loop,corda --policies lru,caffeine" verify
 * </pre>
 *
 * See {@link Options#USAGE} for the flags.
 */
public final class Simulator {
    private final Options options;
    private final PrintStream out;
    private final PrintStream log;

    public Simulator(Options options, PrintStream out, PrintStream log) {
        this.options = options;
        this.out = out;
        this.log = log;
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.print(Options.USAGE);
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(Options.USAGE);
            return;
        }
        Path root = Options.repoRoot();
        Simulator simulator = new Simulator(options, System.out, System.err);
        List<Workload> workloads;
        try {
            workloads = simulator.workloads(root);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        long start = System.nanoTime();
        List<Row> rows = simulator.run(workloads);
        long elapsed = System.nanoTime() - start;
        simulator.report(root, rows, args, elapsed);
    }

    /** The selected workloads: traces found in the trace directory, then the synthetic ones. */
    public List<Workload> workloads(Path root) throws IOException {
        Path traceDir = options.resolveTraceDir(root);
        TraceCatalog catalog = TraceCatalog.scan(traceDir);
        if (catalog.traces().isEmpty()) {
            log.println("warning: no traces in " + traceDir + "; only synthetic workloads run");
        }
        List<Workload> traces = new ArrayList<>();
        catalog.traces().forEach(t -> traces.add(new TraceWorkload(t)));
        return options.select(traces, SyntheticWorkloads.all(catalog));
    }

    /** Runs every selected workload at each selected size through every selected policy. */
    public List<Row> run(List<Workload> workloads) throws IOException, InterruptedException {
        List<Row> rows = new ArrayList<>();
        ExecutorService pool = options.threads() > 1 ? Executors.newFixedThreadPool(options.threads()) : null;
        try {
            for (Workload workload : workloads) {
                List<Integer> sizes = options.sizesOf(workload);
                Workload.Requests shared = null;
                for (int size : sizes) {
                    Workload.Requests requests;
                    if (workload.sizeDependent()) {
                        requests = workload.requests(size, options.limit());
                    } else {
                        if (shared == null) {
                            shared = workload.requests(size, options.limit());
                        }
                        requests = shared;
                    }
                    Row row = runRow(workload, size, requests, pool);
                    rows.add(row);
                    log.println(progress(row));
                }
            }
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
        return rows;
    }

    private Row runRow(Workload workload, int size, Workload.Requests requests, ExecutorService pool)
            throws InterruptedException {
        long[] keys = requests.keys();
        int window = workload.phaseChange() ? options.window() : 0;
        Map<PolicyType, Outcome> outcomes = new EnumMap<>(PolicyType.class);
        if (pool == null) {
            for (PolicyType type : options.policies()) {
                outcomes.put(type, runRepeated(type, size, keys, window, options.repeat()));
            }
        } else {
            Map<PolicyType, Future<Outcome>> futures = new EnumMap<>(PolicyType.class);
            for (PolicyType type : options.policies()) {
                futures.put(type, pool.submit(() -> runRepeated(type, size, keys, window, options.repeat())));
            }
            for (var e : futures.entrySet()) {
                try {
                    outcomes.put(e.getKey(), e.getValue().get());
                } catch (ExecutionException ex) {
                    throw new IllegalStateException(
                            e.getKey().id() + " failed on " + workload.name() + "@" + size, ex.getCause());
                }
            }
        }
        return new Row(
                workload.name(),
                workload instanceof TraceWorkload ? "trace" : "synthetic",
                size,
                keys.length,
                workload.phaseChange(),
                requests.phaseStarts(),
                outcomes);
    }

    /** One policy over one sequence, from a cold cache. */
    public static Outcome runOne(PolicyType type, int size, long[] keys, int window) {
        try (Policy policy = type.create(size, keys)) {
            return Run.run(policy, keys, window);
        }
    }

    /** {@link #runOne}, {@code repeat} times from a fresh cache if the policy is not deterministic. */
    public static Outcome runRepeated(PolicyType type, int size, long[] keys, int window, int repeat) {
        Outcome outcome = runOne(type, size, keys, window);
        for (int r = 1; r < (type.deterministic() ? 1 : repeat); r++) {
            outcome = outcome.plus(runOne(type, size, keys, window));
        }
        return outcome;
    }

    private String progress(Row row) {
        StringBuilder line = new StringBuilder(String.format("%-24s %,12d", row.label(), row.requests()));
        for (PolicyType type : options.policies()) {
            Outcome o = row.outcomes().get(type);
            line.append(String.format(
                    "  %s %6.2f%% (%.0f ns/req)",
                    type.id(), 100 * o.hitRate(), o.requests() == 0 ? 0.0 : (double) o.nanos() / o.requests()));
        }
        return line.toString();
    }

    /** Prints the table and writes the result files (and the docs, with {@code --docs}). */
    public void report(Path root, List<Row> rows, String[] args, long elapsedNanos) throws IOException {
        Environment env = Environment.capture(args, options.limit(), elapsedNanos);
        String table = Table.fixedWidth(rows, options.policies());
        out.println();
        out.print(table);
        Path outDir = options.resolveOutDir(root);
        Files.createDirectories(outDir);
        ResultFiles.write(outDir, rows, options.policies(), env);
        Files.writeString(outDir.resolve("hit-rates.txt"), table);
        Charts.write(outDir, outDir.resolve("img"));
        Files.writeString(outDir.resolve("hit-rates.md"), Table.markdownReport(rows, options.policies(), env, "img"));
        out.println();
        out.println(
                "Wrote " + outDir.resolve("hit-rates.json") + ", hit-rates.csv, windows.csv, hit-rates.md, img/*.svg");
        Path docs = options.resolveDocsDir(root);
        if (docs != null) {
            Files.createDirectories(docs);
            Charts.write(outDir, docs.resolve("img"));
            Files.writeString(docs.resolve("hit-rates.md"), Table.markdownReport(rows, options.policies(), env, "img"));
            out.println("Wrote " + docs.resolve("hit-rates.md") + " and " + docs.resolve("img") + "/*.svg");
        }
    }
}
