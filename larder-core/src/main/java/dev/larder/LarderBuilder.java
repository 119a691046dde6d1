package dev.larder;

import dev.larder.internal.CacheConfig;
import dev.larder.internal.CacheSizing;
import dev.larder.internal.Caches;
import dev.larder.internal.memory.NativeMemory;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

/**
 * Configures and builds a cache. Every setting has a sensible default except the memory
 * budget, which is required: {@link #maximumBytes(long)}. Each setter validates its argument
 * and names it in the exception.
 */
public final class LarderBuilder<K, V> {
    /** The smallest budget accepted: one page of records plus the index and metadata. */
    public static final long MIN_MAXIMUM_BYTES = 64 * 1024;

    private final Codec<K> keyCodec;
    private final Codec<V> valueCodec;
    private long maximumBytes = -1;
    private long maximumEntries = -1;
    private long expectedEntries = -1;
    private long indexMemoryBudget = -1;
    private long expireAfterWriteNanos = -1;
    private long expireAfterAccessNanos = -1;
    private int concurrencyLevel = -1;
    private Ticker ticker = Ticker.system();
    private RemovalListener<? super K, ? super V> removalListener;
    private Executor executor = ForkJoinPool.commonPool();
    /** Null until set: then advised wherever the JVM grants Larder native access. */
    private Boolean adviseHugePages;

    private int partitions = -1;

    LarderBuilder(Codec<K> keyCodec, Codec<V> valueCodec) {
        this.keyCodec = Objects.requireNonNull(keyCodec, "keyCodec");
        this.valueCodec = Objects.requireNonNull(valueCodec, "valueCodec");
    }

    /**
     * The native memory budget in bytes: records, large values, the index and all metadata. The
     * cache never holds more; when full it evicts. Required.
     */
    public LarderBuilder<K, V> maximumBytes(long bytes) {
        if (bytes < MIN_MAXIMUM_BYTES) {
            throw new IllegalArgumentException(
                    "maximumBytes must be at least " + MIN_MAXIMUM_BYTES + " bytes, was " + bytes);
        }
        this.maximumBytes = bytes;
        return this;
    }

    /**
     * An upper bound on the number of entries, besides the byte budget. Optional. From 4,096
     * entries up, inserts may pass it by up to 1/512 of it (at most 4,096 entries) for as long as
     * another thread is evicting, rather than wait for that thread (as Caffeine's {@code
     * maximumSize} may be passed while it evicts): while fewer threads use the cache than there
     * are cores, a writer past the bound hands the eviction to the {@linkplain #executor
     * executor} and goes on, and only a writer at that limit evicts itself. The executor's task,
     * or {@code cleanUp}, brings the count back under it. A single writer whose maintenance runs
     * on its own thread ({@code executor(Runnable::run)}) never leaves it passed.
     */
    public LarderBuilder<K, V> maximumEntries(long entries) {
        if (entries <= 0) {
            throw new IllegalArgumentException("maximumEntries must be positive, was " + entries);
        }
        this.maximumEntries = entries;
        return this;
    }

    /**
     * How many entries the cache is expected to hold, to size the index up front and skip its
     * growth steps. Optional; the index grows on its own either way. A cache bounded by bytes
     * alone that expects 64K entries or more is also split into {@link #partitions} by default.
     */
    public LarderBuilder<K, V> expectedEntries(long entries) {
        if (entries <= 0) {
            throw new IllegalArgumentException("expectedEntries must be positive, was " + entries);
        }
        this.expectedEntries = entries;
        return this;
    }

    /**
     * The memory to give the hash index, in bytes. With {@link #expectedEntries} (or {@link
     * #maximumEntries}) it sets the index's load factor: more memory, shorter probes. Must leave
     * a load factor between 0.5 and 0.95.
     */
    public LarderBuilder<K, V> indexMemoryBudget(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("indexMemoryBudget must be positive, was " + bytes);
        }
        this.indexMemoryBudget = bytes;
        return this;
    }

    /** Entries expire this long after they were last written. */
    public LarderBuilder<K, V> expireAfterWrite(Duration duration) {
        this.expireAfterWriteNanos = positiveNanos("expireAfterWrite", duration);
        return this;
    }

    /** Entries expire this long after they were last read or written. */
    public LarderBuilder<K, V> expireAfterAccess(Duration duration) {
        this.expireAfterAccessNanos = positiveNanos("expireAfterAccess", duration);
        return this;
    }

    /**
     * How many independent index shards writers spread over; a power of two is used. Default:
     * scaled with the budget and the number of cores.
     */
    public LarderBuilder<K, V> concurrencyLevel(int shards) {
        if (shards <= 0 || shards > (1 << 16)) {
            throw new IllegalArgumentException("concurrencyLevel must be in [1, 65536], was " + shards);
        }
        this.concurrencyLevel = shards;
        return this;
    }

    /** The time source for expiry; for tests. */
    public LarderBuilder<K, V> ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return this;
    }

    /** Told about every removal with its cause. */
    public LarderBuilder<K, V> removalListener(RemovalListener<? super K, ? super V> listener) {
        this.removalListener = Objects.requireNonNull(listener, "removalListener");
        return this;
    }

    /**
     * Where maintenance runs: eviction between the low and high watermarks, counting reads in
     * the frequency sketch, dropping expired entries, delivering their removals to the listener.
     * Default {@link ForkJoinPool#commonPool()}. A writer still evicts on its own thread when
     * memory is at the high watermark (no free page, or the entry bound reached), so a slow or
     * saturated executor costs latency, never the bound. {@code Runnable::run} runs maintenance
     * on the calling thread when it is due: deterministic, for tests and simulations.
     */
    public LarderBuilder<K, V> executor(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
        return this;
    }

    /**
     * Whether the cache asks the kernel to back its log, its index tables and its frequency
     * sketch with transparent huge pages ({@code madvise} with {@code MADV_HUGEPAGE}), for Linux
     * machines whose transparent huge pages are set to {@code madvise} (the default of several
     * distributions): a random read then misses the TLB far less (a GET at 10M entries 11%
     * faster, at 1M ~5%; docs/speed-work.md, nineteenth and thirtieth sessions).
     *
     * <p>By default the cache asks wherever the JVM grants Larder native access ({@code
     * --enable-native-access=ALL-UNNAMED}, or {@code dev.larder} on the module path), and not
     * elsewhere: asking calls restricted FFM methods ({@code mmap} and {@code madvise}
     * downcalls), which without the flag make this JDK warn. {@code true} asks even so (a JVM
     * that denies native access then makes {@link #build()} fail with {@link
     * IllegalStateException}); {@code false} never asks.
     *
     * <p>What is advised: pages of whole 2 MiB huge pages (caches of 2 GiB or more); smaller
     * pages carved from advised 2 MiB slabs when the log spans at least 64 of them (caches of
     * 128 MiB or more, per partition); the index tables, laid out in one advised block when each
     * is under 2 MiB; a sketch of 2 MiB or more. The one partly used slab is faulted in whole,
     * so resident memory may exceed the pages in use by up to 2 MiB per partition (under 1.6%);
     * the first touch of each huge page zeroes 2 MiB, so filling an empty cache is slower (a
     * fill of 1M entries 0.6 → 1.0 s), while pages, once made, are reused. A kernel set to {@code
     * always} gives huge pages without asking; one set to {@code never} ignores the advice. Linux
     * on x86-64 and aarch64 only; elsewhere this does nothing.
     */
    public LarderBuilder<K, V> adviseHugePages(boolean advise) {
        this.adviseHugePages = advise;
        return this;
    }

    /**
     * Splits the cache by key hash into {@code partitions} independent parts, each with a share
     * of the entry bound and of {@code maximumBytes} and its own eviction: threads whose keys fall
     * in different partitions evict at the same time, where in one cache eviction is one thread
     * at a time. Two threads inserting new keys into a cache of 100K entries took ~1,040 ns per
     * insert in one cache and ~730 in two partitions (docs/speed-work.md, twentieth session).
     *
     * <p>Default: one partition per core (a power of two) for caches with an entry bound, or
     * bounded by bytes alone with {@link #expectedEntries}, as long as each partition holds at
     * least 32,768 of those entries and 8 MiB; a cache bounded by bytes alone without an expected
     * entry count is not split (it may be meant for a few values that each need much of the
     * budget). The entry bound stays the whole cache's: a partition that holds more keys than its
     * share borrows slots from the others. What a partition costs: each keeps its own frequency
     * sketch and adapts its own window (the simulator's rows of 100K entries and more moved by
     * -0.03 to +0.13 points), one value can use at most its partition's share of {@code
     * maximumBytes}, and
     * one thread's inserts were ~10% slower at 100K entries. {@code partitions(1)} keeps one
     * cache.
     */
    public LarderBuilder<K, V> partitions(int partitions) {
        if (partitions < 1 || partitions > CacheSizing.MAX_PARTITIONS) {
            throw new IllegalArgumentException(
                    "partitions must be in [1, " + CacheSizing.MAX_PARTITIONS + "], was " + partitions);
        }
        this.partitions = partitions;
        return this;
    }

    /** Builds the cache. */
    public LarderCache<K, V> build() {
        return Caches.create(config(), null);
    }

    /** Builds a loading cache backed by {@code loader}. */
    public LoadingLarderCache<K, V> build(CacheLoader<? super K, V> loader) {
        Objects.requireNonNull(loader, "loader");
        return Caches.create(config(), loader);
    }

    private CacheConfig<K, V> config() {
        if (maximumBytes < 0) {
            throw new IllegalStateException("maximumBytes is required: call maximumBytes(bytes)");
        }
        if (expireAfterWriteNanos > 0 && expireAfterAccessNanos > 0) {
            throw new IllegalStateException("set expireAfterWrite or expireAfterAccess, not both");
        }
        if (partitions > 1 && maximumBytes / partitions < MIN_MAXIMUM_BYTES) {
            throw new IllegalStateException("partitions (" + partitions + ") leave each less than " + MIN_MAXIMUM_BYTES
                    + " bytes of maximumBytes (" + maximumBytes + ")");
        }
        if (partitions > 1 && maximumEntries > 0 && maximumEntries < partitions) {
            throw new IllegalStateException(
                    "partitions (" + partitions + ") exceed maximumEntries (" + maximumEntries + ")");
        }
        long sizingEntries = expectedEntries > 0 ? expectedEntries : maximumEntries;
        if (indexMemoryBudget > 0) {
            if (sizingEntries <= 0) {
                throw new IllegalStateException(
                        "indexMemoryBudget needs expectedEntries or maximumEntries to derive the load factor");
            }
            double load = sizingEntries * 8.0 / indexMemoryBudget;
            if (load < 0.5 || load > 0.95) {
                throw new IllegalStateException(String.format(
                        "indexMemoryBudget of %d bytes gives a load factor of %.2f for %d entries;"
                                + " it must give between 0.5 and 0.95 (%d to %d bytes)",
                        indexMemoryBudget,
                        load,
                        sizingEntries,
                        (long) Math.ceil(sizingEntries * 8 / 0.95),
                        sizingEntries * 16));
            }
            if (indexMemoryBudget >= maximumBytes / 2) {
                throw new IllegalStateException("indexMemoryBudget (" + indexMemoryBudget
                        + ") must be less than half of maximumBytes (" + maximumBytes + ")");
            }
        }
        return new CacheConfig<>(
                keyCodec,
                valueCodec,
                maximumBytes,
                maximumEntries,
                sizingEntries,
                indexMemoryBudget,
                expireAfterWriteNanos,
                expireAfterAccessNanos,
                concurrencyLevel,
                ticker,
                removalListener,
                executor,
                adviseHugePages != null ? adviseHugePages : NativeMemory.hugePageAdviceGranted(),
                partitions);
    }

    private static long positiveNanos(String name, Duration duration) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + duration);
        }
        return duration.toNanos();
    }
}
