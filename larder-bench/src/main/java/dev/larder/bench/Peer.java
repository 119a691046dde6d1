package dev.larder.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * Every cache the benchmarks know, with the JVM flags it needs on JDK 25. The benchmark runner
 * ({@code larder-bench/bench.sh}) and the memory probe start each cache's JVM with exactly its own
 * flags, so Larder runs without the ones its peers need (Unsafe access, opened JDK internals).
 */
public enum Peer {
    LARDER("larder", "Larder", "off-heap (FFM)", List.of(Flags.NATIVE_ACCESS)),
    CAFFEINE("caffeine", "Caffeine", "on-heap (reference)", List.of()),
    OHC("ohc", "OHC", "off-heap (Unsafe)", List.of(Flags.UNSAFE, Flags.NATIVE_ACCESS)),
    CHRONICLE("chronicle", "Chronicle Map", "off-heap (Unsafe), no eviction", Flags.CHRONICLE_LIST),
    EHCACHE("ehcache", "Ehcache 3 (off-heap tier only)", "off-heap (direct buffers)", List.of()),
    MAPDB("mapdb", "MapDB 3 (memoryDirectDB)", "off-heap (direct buffers)", List.of(Flags.NATIVE_ACCESS)),
    CACHE2K("cache2k", "cache2k", "on-heap", List.of());

    private final String id;
    private final String title;
    private final String storage;
    private final List<String> jvmFlags;

    Peer(String id, String title, String storage, List<String> jvmFlags) {
        this.id = id;
        this.title = title;
        this.storage = storage;
        this.jvmFlags = jvmFlags;
    }

    /** The name used by the {@code cache} benchmark parameter. */
    public String id() {
        return id;
    }

    /** A human name. */
    public String title() {
        return title;
    }

    /** Where it keeps entries. */
    public String storage() {
        return storage;
    }

    /** The Maven version measured. */
    public String version() {
        return Versions.PROPS.getProperty(id, "?");
    }

    /** The JVM flags this cache needs on JDK 25. */
    public List<String> jvmFlags() {
        return jvmFlags;
    }

    /** Whether the cache keeps its entries on the Java heap. */
    public boolean onHeap() {
        return this == CAFFEINE || this == CACHE2K;
    }

    /** Whether the cache evicts when full, as its adapter's {@link BenchCache#evicts} says: Chronicle Map is a map. */
    public boolean evicts() {
        return this != CHRONICLE;
    }

    /** The peer with that id. */
    public static Peer of(String id) {
        for (Peer p : values()) {
            if (p.id.equals(id)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown cache '" + id + "'; known: " + ids());
    }

    /** All ids, in order. */
    public static List<String> ids() {
        return Arrays.stream(values()).map(Peer::id).toList();
    }

    /** The union of every peer's flags, for a JVM that runs them all. */
    public static List<String> allFlags() {
        Set<String> all = new LinkedHashSet<>();
        for (Peer p : values()) {
            all.addAll(p.jvmFlags);
        }
        return new ArrayList<>(all);
    }

    /**
     * Prints a peer's JVM flags on one line ({@code Peer ohc}), or every id ({@code Peer --ids}),
     * or the union ({@code Peer --all}). Used by bench.sh.
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: Peer <cache>|--ids|--all");
            System.exit(2);
        }
        switch (args[0]) {
            case "--ids" -> System.out.println(String.join(" ", ids()));
            case "--all" -> System.out.println(String.join(" ", allFlags()));
            default -> System.out.println(String.join(" ", of(args[0]).jvmFlags));
        }
    }

    /** Flags, as constants so {@code @Fork} annotations can name them. */
    public static final class Flags {
        public static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";
        public static final String UNSAFE = "--sun-misc-unsafe-memory-access=allow";
        public static final String NO_ANALYTICS = "-Dchronicle.analytics.disable=true";
        // Chronicle's documented set for Java 17+, plus Unsafe memory access (JDK 24+ warns, a
        // later JDK denies), native access for its JNA/JNR helpers and no usage analytics (the
        // analytics jar is also left out of the build).
        public static final String CH_1 = "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";
        public static final String CH_2 = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
        public static final String CH_3 = "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED";
        public static final String CH_4 = "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED";
        public static final String CH_5 = "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED";
        public static final String CH_6 = "--add-opens=java.base/java.lang=ALL-UNNAMED";
        public static final String CH_7 = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
        public static final String CH_8 = "--add-opens=java.base/java.io=ALL-UNNAMED";
        public static final String CH_9 = "--add-opens=java.base/java.util=ALL-UNNAMED";
        static final List<String> CHRONICLE_LIST =
                List.of(CH_1, CH_2, CH_3, CH_4, CH_5, CH_6, CH_7, CH_8, CH_9, UNSAFE, NATIVE_ACCESS, NO_ANALYTICS);

        private Flags() {}
    }

    private static final class Versions {
        static final Properties PROPS = load();

        private static Properties load() {
            Properties p = new Properties();
            try (InputStream in = Peer.class.getResourceAsStream("versions.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return p;
        }
    }
}
