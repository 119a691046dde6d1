package dev.larder.bench;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderBuilder;
import dev.larder.LarderCache;
import dev.larder.MemoryEstimator;
import dev.larder.ValueReader;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * Larder sized by its own estimator for the entries, keys and values the benchmark uses (the
 * recommended budget, with room for overwrites), and bounded to the same entry count as the
 * on-heap caches.
 */
final class LarderAdapter implements BenchCache {
    private static final ValueReader<Byte> FIRST_BYTE = seg -> seg.get(ValueLayout.JAVA_BYTE, 0);

    final LarderCache<String, byte[]> cache;

    LarderAdapter(long entries, int valueBytes) {
        this(entries, valueBytes, callerRuns());
    }

    /**
     * With {@code callerRuns}, maintenance runs on the caller's thread: see {@link #callerRuns}.
     * The other switches are read here, per cache, so that a probe can build two Larders that
     * differ in one ({@code SideBySideProbe --cache-props}).
     */
    LarderAdapter(long entries, int valueBytes, boolean callerRuns) {
        long bytes = (long) (room()
                * MemoryEstimator.estimate(entries, Keys.KEY_BYTES, valueBytes).recommendedMaximumBytes());
        LarderBuilder<String, byte[]> builder = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(bytes)
                .expectedEntries(entries);
        String adviseHugePages = adviseHugePages();
        if (adviseHugePages != null) {
            builder.adviseHugePages(Boolean.parseBoolean(adviseHugePages));
        }
        if (!bytesOnly()) {
            builder.maximumEntries(entries); // the same entry bound as the on-heap caches get
        }
        int partitions = partitions();
        if (partitions > 0) {
            builder.partitions(partitions);
        }
        int concurrencyLevel = concurrencyLevel();
        if (concurrencyLevel > 0) {
            builder.concurrencyLevel(concurrencyLevel);
        }
        long expireAfterWriteSeconds = expireAfterWriteSeconds();
        if (expireAfterWriteSeconds > 0) {
            builder.expireAfterWrite(Duration.ofSeconds(expireAfterWriteSeconds));
        }
        if (callerRuns) {
            builder.executor(Runnable::run);
        }
        this.cache = builder.build();
    }

    /**
     * {@code -Dlarder.bench.partitions=N}: the cache is built with N partitions
     * ({@code LarderBuilder.partitions}) instead of the default for the machine, for A/B runs.
     */
    static int partitions() {
        return Integer.getInteger("larder.bench.partitions", -1);
    }

    /**
     * {@code -Dlarder.bench.concurrencyLevel=N}: the cache is built with N shards ({@code
     * LarderBuilder.concurrencyLevel}) instead of the default for its size and the machine, for
     * A/B runs.
     */
    static int concurrencyLevel() {
        return Integer.getInteger("larder.bench.concurrencyLevel", -1);
    }

    /**
     * {@code -Dlarder.bench.expireAfterWrite=S}: every entry expires S seconds after its write, for
     * runs of the path an expiring cache takes (a deadline in every record); none by default.
     */
    static long expireAfterWriteSeconds() {
        return Long.getLong("larder.bench.expireAfterWrite", 0);
    }

    /**
     * {@code -Dlarder.bench.bytesOnly=true}: the cache is bounded by its budget alone, as OHC is,
     * with no entry bound, for runs of the path a user who sizes it in bytes takes.
     */
    static boolean bytesOnly() {
        return Boolean.getBoolean("larder.bench.bytesOnly");
    }

    /**
     * {@code -Dlarder.bench.room=F}: the budget is F times the estimator's recommendation (1 by
     * default), for runs of a cache with bytes to spare (values that change length are padded
     * and rewritten in place only then; docs/ARCHITECTURE.md §2).
     */
    static double room() {
        return Double.parseDouble(System.getProperty("larder.bench.room", "1"));
    }

    /**
     * {@code -Dlarder.bench.adviseHugePages=true|false}: the cache is told whether to ask for huge
     * pages ({@code LarderBuilder.adviseHugePages}); unset, it takes the builder's default (it
     * asks, as the benchmarks run it with {@code --enable-native-access=ALL-UNNAMED}).
     */
    static String adviseHugePages() {
        return System.getProperty("larder.bench.adviseHugePages");
    }

    /**
     * {@code -Dlarder.bench.callerRuns=true}: maintenance runs on the caller's thread
     * ({@code executor(Runnable::run)}), so an insert always carries its own eviction: what
     * {@code instructions.sh} counts is then the same run after run (with the default executor,
     * how much of it the executor takes depends on the thread census's timing).
     */
    static boolean callerRuns() {
        return Boolean.getBoolean("larder.bench.callerRuns");
    }

    @Override
    public byte[] get(String key) {
        return cache.getIfPresent(key);
    }

    /** A zero-copy read of the value's first byte; -1 (as an int) on a miss. */
    int readFirstByte(String key) {
        Byte b = cache.read(key, FIRST_BYTE);
        return b == null ? -1 : b;
    }

    @Override
    public void put(String key, byte[] value) {
        cache.put(key, value);
    }

    @Override
    public String name() {
        return Peer.LARDER.id();
    }

    @Override
    public long reportedBytes() {
        return cache.memoryUsed();
    }

    @Override
    public void close() {
        cache.close();
    }
}
