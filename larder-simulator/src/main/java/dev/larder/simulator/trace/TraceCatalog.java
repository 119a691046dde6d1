package dev.larder.simulator.trace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The trace files of a directory (by default {@code ../shared/traces}), each with the cache
 * sizes to evaluate it at. The sizes are those of the directory's README; a trace that is not
 * listed there gets {@link #DEFAULT_SIZES}.
 */
public final class TraceCatalog {
    /** Sizes for a trace that the table below does not know. */
    public static final List<Integer> DEFAULT_SIZES = List.of(1_000, 10_000);

    /** Cache sizes (entries) per trace, from {@code ../shared/traces/README.md}. */
    static final Map<String, List<Integer>> SIZES = Map.ofEntries(
            Map.entry("loop", List.of(500, 1000)),
            Map.entry("2_pools", List.of(500, 1000, 2000)),
            Map.entry("cpp", List.of(20, 50, 100)),
            Map.entry("multi1", List.of(250, 750, 1500)),
            Map.entry("multi2", List.of(600, 1800, 3000)),
            Map.entry("sprite", List.of(100, 400, 1000)),
            Map.entry("cs", List.of(100, 400, 800)),
            Map.entry("ps", List.of(200, 800, 1600)),
            Map.entry("scan", List.of(500, 1000)),
            Map.entry("zigzag", List.of(500, 1000)),
            Map.entry("backf", List.of(100, 300)),
            Map.entry("orm-night", List.of(1250, 5000, 10000)),
            Map.entry("web07", List.of(500, 2000, 5000)),
            Map.entry("scarab", List.of(25000, 100000)),
            Map.entry("corda", List.of(512, 1024)),
            Map.entry("gcc", List.of(1000, 5000, 10000)),
            Map.entry("p2", List.of(32768, 131072, 524288)),
            Map.entry("p6", List.of(32768, 131072, 524288)));

    /** The order of the README's table; traces it does not list come after, by name. */
    private static final List<String> ORDER = List.of(
            "loop",
            "2_pools",
            "cpp",
            "multi1",
            "multi2",
            "sprite",
            "cs",
            "ps",
            "scan",
            "zigzag",
            "backf",
            "orm-night",
            "web07",
            "scarab",
            "corda",
            "gcc",
            "p2",
            "p6");

    /** One trace file. */
    public record TraceFile(String name, Path path, TraceFormat format, List<Integer> sizes) {
        /** Streams at most {@code limit} keys of the trace. */
        public long[] load(long limit) throws IOException {
            LongArrayBuilder keys = new LongArrayBuilder(1 << 20);
            format.read(path, keys, limit);
            return keys.toArray();
        }
    }

    private final Path directory;
    private final List<TraceFile> traces;

    private TraceCatalog(Path directory, List<TraceFile> traces) {
        this.directory = directory;
        this.traces = traces;
    }

    /** The traces in {@code directory}; none if it does not exist. */
    public static TraceCatalog scan(Path directory) throws IOException {
        List<TraceFile> found = new ArrayList<>();
        if (Files.isDirectory(directory)) {
            try (Stream<Path> files = Files.list(directory)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    TraceFormat format = TraceFormat.of(file);
                    if (format != null && Files.isRegularFile(file)) {
                        String name = format.traceName(file);
                        found.add(new TraceFile(name, file, format, SIZES.getOrDefault(name, DEFAULT_SIZES)));
                    }
                }
            }
        }
        found.sort(Comparator.comparingInt((TraceFile t) -> {
                    int i = ORDER.indexOf(t.name());
                    return i < 0 ? Integer.MAX_VALUE : i;
                })
                .thenComparing(TraceFile::name));
        return new TraceCatalog(directory, List.copyOf(found));
    }

    public Path directory() {
        return directory;
    }

    public List<TraceFile> traces() {
        return traces;
    }

    /** The trace of that name, or null. */
    public TraceFile find(String name) {
        for (TraceFile trace : traces) {
            if (trace.name().equals(name)) {
                return trace;
            }
        }
        return null;
    }
}
