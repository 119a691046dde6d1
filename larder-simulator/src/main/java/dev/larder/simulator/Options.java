package dev.larder.simulator;

import dev.larder.simulator.policy.PolicyType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The simulator's command line. Lists are comma-separated; {@code --name value} and {@code
 * --name=value} both work.
 *
 * @param traces workload names to run (empty: all); {@code traces} and {@code synthetic} name the
 *     two groups
 * @param policies the policies, in column order
 * @param sizes cache sizes to keep (empty: every size of each workload)
 * @param atSizes cache sizes to run every workload at instead of its own (empty: its own)
 * @param limit requests per workload at most
 * @param traceDir where the trace files are, or null for {@code <repo>/../shared/traces}
 * @param outDir where results go, or null for {@code <repo>/larder-simulator/target}
 * @param docsDir if set, also write {@code hit-rates.md} and {@code img/*.svg} there
 * @param window requests per window for the windowed hit rate of phase-change workloads
 * @param threads runs in parallel
 * @param repeat runs of each non-deterministic policy (Caffeine, Larder), averaged
 */
public record Options(
        List<String> traces,
        List<PolicyType> policies,
        List<Integer> sizes,
        List<Integer> atSizes,
        long limit,
        Path traceDir,
        Path outDir,
        Path docsDir,
        int window,
        int threads,
        int repeat,
        boolean help) {

    /** What {@code --quick} limits each workload to. */
    public static final long QUICK_LIMIT = 1_000_000;

    public static final int DEFAULT_WINDOW = 10_000;

    public static final String USAGE = """
            Usage: Simulator [options]
              --traces a,b,..     workloads to run (default: all); 'traces' = every trace file,
                                  'synthetic' = every generated workload
              --policies a,b,..   lru, caffeine, larder, belady (default: all)
              --sizes n,m,..      only these of each workload's cache sizes
              --at-sizes n,m,..   these cache sizes instead of each workload's own (to try
                                  a trace at a size the table does not list)
              --quick             only the first 1,000,000 requests of each workload
              --limit N           only the first N requests of each workload
              --trace-dir DIR     trace files (default: <repo>/../shared/traces, or -Dlarder.traces)
              --out DIR           results (default: <repo>/larder-simulator/target)
              --docs DIR          also write DIR/hit-rates.md and DIR/img/*.svg
              --window N          window of the windowed hit rate (default: 10000)
              --threads N         runs in parallel (default: 1)
              --repeat N          run Caffeine and Larder (not deterministic) N times and
                                  report the mean (default: 1)
              --help
            """;

    /** Parses {@code args}; throws {@link IllegalArgumentException} with a message on a bad one. */
    public static Options parse(String... args) {
        List<String> traces = new ArrayList<>();
        Set<PolicyType> policies = EnumSet.noneOf(PolicyType.class);
        List<Integer> sizes = new ArrayList<>();
        List<Integer> atSizes = new ArrayList<>();
        long limit = Long.MAX_VALUE;
        Path traceDir = null;
        Path outDir = null;
        Path docsDir = null;
        int window = DEFAULT_WINDOW;
        int threads = 1;
        int repeat = 1;
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.isBlank()) {
                continue;
            }
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "--help", "-h" -> help = true;
                case "--quick" -> limit = Math.min(limit, QUICK_LIMIT);
                default -> {
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            throw new IllegalArgumentException(name + " needs a value");
                        }
                        value = args[++i];
                    }
                    switch (name) {
                        case "--traces", "--trace" -> traces.addAll(list(value));
                        case "--policies", "--policy" -> {
                            for (String p : list(value)) {
                                policies.add(PolicyType.of(p));
                            }
                        }
                        case "--sizes", "--size" -> {
                            for (String s : list(value)) {
                                sizes.add(positiveInt(name, s));
                            }
                        }
                        case "--at-sizes" -> {
                            for (String s : list(value)) {
                                atSizes.add(positiveInt(name, s));
                            }
                        }
                        case "--limit" -> limit = Math.min(limit, positiveLong(name, value));
                        case "--trace-dir" -> traceDir = Path.of(value);
                        case "--out" -> outDir = Path.of(value);
                        case "--docs" -> docsDir = Path.of(value);
                        case "--window" -> window = positiveInt(name, value);
                        case "--threads" -> threads = positiveInt(name, value);
                        case "--repeat" -> repeat = positiveInt(name, value);
                        default -> throw new IllegalArgumentException("unknown option " + name);
                    }
                }
            }
        }
        List<PolicyType> chosen = policies.isEmpty() ? List.of(PolicyType.values()) : List.copyOf(policies);
        return new Options(
                List.copyOf(new LinkedHashSet<>(traces)),
                chosen,
                List.copyOf(sizes),
                List.copyOf(atSizes),
                limit,
                traceDir,
                outDir,
                docsDir,
                window,
                threads,
                repeat,
                help);
    }

    /**
     * The selected workloads, in the catalog's order. Throws if a name matches none, listing
     * the names there are.
     */
    public List<Workload> select(List<Workload> traceWorkloads, List<Workload> synthetic) {
        List<Workload> all = new ArrayList<>(traceWorkloads);
        all.addAll(synthetic);
        if (traces.isEmpty()) {
            return all;
        }
        Set<String> wanted = new LinkedHashSet<>();
        for (String name : traces) {
            switch (name) {
                case "traces" -> traceWorkloads.forEach(w -> wanted.add(w.name()));
                case "synthetic" -> synthetic.forEach(w -> wanted.add(w.name()));
                default -> {
                    if (all.stream().noneMatch(w -> w.name().equals(name))) {
                        List<String> known = all.stream().map(Workload::name).toList();
                        throw new IllegalArgumentException("unknown trace '" + name + "'; known: "
                                + String.join(", ", known) + " (and the groups 'traces', 'synthetic')");
                    }
                    wanted.add(name);
                }
            }
        }
        return all.stream().filter(w -> wanted.contains(w.name())).toList();
    }

    /** The sizes of {@code workload} to run: all of them, or those named by {@code --sizes}. */
    public List<Integer> sizesOf(Workload workload) {
        if (!atSizes.isEmpty()) {
            return atSizes;
        }
        if (sizes.isEmpty()) {
            return workload.sizes();
        }
        return workload.sizes().stream().filter(sizes::contains).toList();
    }

    /** The repository root: {@code -Dlarder.repoRoot}, else the nearest directory up from here with a {@code .mvn}. */
    public static Path repoRoot() {
        String property = System.getProperty("larder.repoRoot");
        if (property != null && !property.isBlank()) {
            return Path.of(property).toAbsolutePath().normalize();
        }
        Path here = Path.of("").toAbsolutePath();
        for (Path dir = here; dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(".mvn")) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        return here;
    }

    /** The trace directory: {@code --trace-dir}, else {@code -Dlarder.traces}, else {@code <repo>/../shared/traces}. */
    public Path resolveTraceDir(Path repoRoot) {
        if (traceDir != null) {
            return traceDir.toAbsolutePath().normalize();
        }
        String property = System.getProperty("larder.traces");
        if (property != null && !property.isBlank()) {
            return Path.of(property).toAbsolutePath().normalize();
        }
        return repoRoot.resolve("../shared/traces").normalize();
    }

    /** The results directory: {@code --out}, else {@code <repo>/larder-simulator/target}. */
    public Path resolveOutDir(Path repoRoot) {
        return outDir != null ? repoRoot.resolve(outDir).normalize() : repoRoot.resolve("larder-simulator/target");
    }

    /** The docs directory relative to the repository root, or null. */
    public Path resolveDocsDir(Path repoRoot) {
        return docsDir == null ? null : repoRoot.resolve(docsDir).normalize();
    }

    private static List<String> list(String value) {
        List<String> items = new ArrayList<>();
        for (String item : value.split(",")) {
            if (!item.isBlank()) {
                items.add(item.trim());
            }
        }
        return items;
    }

    private static int positiveInt(String option, String value) {
        long parsed = positiveLong(option, value);
        if (parsed > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(option + " is too large: " + value);
        }
        return (int) parsed;
    }

    private static long positiveLong(String option, String value) {
        long parsed;
        try {
            parsed = Long.parseLong(value.replace("_", "").trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " needs a number, was '" + value + "'");
        }
        if (parsed <= 0) {
            throw new IllegalArgumentException(option + " must be positive, was " + value);
        }
        return parsed;
    }
}
