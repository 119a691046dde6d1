package dev.larder.internal;

import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.RecordLayout;

/**
 * The automatic defaults: page size, shard count, writer stripes and the first index size,
 * derived from the budget, the expected entries and the machine. One place, so the builder,
 * the cache and the memory estimator agree.
 */
public record CacheSizing(int pageSize, int shards, int writerStripes, int initialSlotsPerShard, double maxLoad) {

    /**
     * The evictor compacts (copies live records forward) rather than evicts while live records
     * fill less than this share of the pages. Under uniform overwrites the oldest records are
     * mostly dead by the time compaction reaches them, so a high threshold costs few copies.
     */
    public static final double COMPACT_BELOW = 0.8;

    /**
     * An overwrite that changes a value's length pads its new record (room to change length in
     * place again) only while live records fill less than this share of the budget's room for
     * records: padding is worth its bytes only where they are spare. Below {@link #COMPACT_BELOW},
     * so that once the pages fill, compaction, not eviction, keeps up with the dead records the
     * padding stops leaving.
     */
    public static final double PAD_BELOW = 0.7;

    /** Pages per budget: enough that a few partly filled pages cost about 1% of it. */
    static final int TARGET_PAGES = 2048;

    static final int MIN_PAGE_SIZE = 4 * 1024;
    static final int MAX_PAGE_SIZE = 8 * 1024 * 1024;

    /**
     * Bytes of budget per shard by default. Fewer, larger shards mean fewer growth steps (each
     * frees a native block, a ~20 us handshake); more shards mean shorter growth pauses for the
     * writers of one shard. 64 MiB keeps a shard near 250K entries of 256 bytes.
     */
    static final long BYTES_PER_SHARD = 64L * 1024 * 1024;

    /**
     * Shards per core when the budget allows: two writers on 8 shards (4 per core) met in one
     * shard often enough that 2-thread overwrites were 10% slower than on 64 (docs/speed-work.md,
     * thirteenth session). A shard costs little (its lock, its seq, a table presized from the
     * expected entries), but a tiny cache does not need many.
     */
    static final long SHARDS_PER_CORE = 32;

    /** Shards per core however small the budget. */
    static final long MIN_SHARDS_PER_CORE = 4;

    /** A budget gets at most one shard per this many bytes beyond {@link #MIN_SHARDS_PER_CORE}. */
    static final long MIN_BYTES_PER_SHARD = 64L * 1024;

    /** The most slots one shard presizes to (its table must stay under 2 GiB). */
    static final int MAX_SLOTS_PER_SHARD = Integer.MAX_VALUE / 8;

    /** Index slots per shard when nothing says how many entries to expect. */
    static final int DEFAULT_INITIAL_SLOTS = 64;

    public static CacheSizing of(
            long maximumBytes, long expectedEntries, long indexMemoryBudget, int concurrencyLevel, int cores) {
        return of(maximumBytes, expectedEntries, indexMemoryBudget, concurrencyLevel, cores, 1);
    }

    /**
     * The sizing of one of {@code partitions} partitions whose budget is {@code maximumBytes}: its
     * pages are the whole cache's size (so a partition keeps the whole cache's longest key, value
     * threshold and huge pages), and it has a {@code partitions}-th of the pages.
     */
    public static CacheSizing of(
            long maximumBytes,
            long expectedEntries,
            long indexMemoryBudget,
            int concurrencyLevel,
            int cores,
            int partitions) {
        long pageSizingBytes = maximumBytes * Math.max(1, partitions);
        int pageSize = (int) Math.min(
                MAX_PAGE_SIZE,
                Math.max(
                        Math.max(MIN_PAGE_SIZE, pageFloorForEntries(maximumBytes, expectedEntries)),
                        Long.highestOneBit(Math.max(1, pageSizingBytes / TARGET_PAGES))));
        if (pageSize >= NativeMemory.HUGE_PAGE / 2) {
            // A whole huge page (NativeMemory.allocate aligns it to one): budgets of 2-4 GiB get
            // 1,024-2,048 pages of 2 MiB instead of 2,048-4,096 of 1 MiB.
            pageSize = (int) Math.max(pageSize, NativeMemory.HUGE_PAGE);
        }
        int shards;
        if (concurrencyLevel > 0) {
            shards = ceilPow2(concurrencyLevel);
        } else {
            // The whole cache's shards for its cores, shared among its partitions (whose writers
            // are spread already): a partition of two has half the shards, each as large as a
            // single cache's, not as many half-size ones (smaller tables cost RSS beyond their
            // bytes: ~2 bytes per entry at 1M entries of 32-byte values).
            long whole = Math.max(
                    MIN_SHARDS_PER_CORE * cores,
                    Math.min(SHARDS_PER_CORE * cores, pageSizingBytes / MIN_BYTES_PER_SHARD));
            long forCores = Math.max(1, whole / Math.max(1, partitions));
            long wanted = Math.max(forCores, maximumBytes / BYTES_PER_SHARD);
            shards = ceilPow2((int) Math.min(1 << 16, wanted));
        }
        long pages = maximumBytes / pageSize;
        // A power of two: writers pick their stripe with a mask of the thread id.
        int stripes = Integer.highestOneBit((int) Math.max(1, Math.min(ceilPow2(cores), pages / 16)));
        double maxLoad = IndexShard.MAX_LOAD;
        int slots = DEFAULT_INITIAL_SLOTS;
        if (indexMemoryBudget > 0 && expectedEntries > 0) {
            long totalSlots = indexMemoryBudget / 8;
            slots = (int) Math.min(MAX_SLOTS_PER_SHARD, Math.max(IndexShard.MIN_CAPACITY, totalSlots / shards));
            maxLoad = Math.max(maxLoad, Math.min(IndexShard.HARD_MAX_LOAD, expectedEntries / (double) totalSlots));
        } else if (expectedEntries > 0) {
            maxLoad = IndexShard.PRESIZED_MAX_LOAD;
            // Whether the cache is small is the whole cache's count, not a partition's.
            int parts = Math.max(1, partitions);
            long whole = expectedEntries > Long.MAX_VALUE / parts ? Long.MAX_VALUE : expectedEntries * parts;
            double presizedLoad = IndexShard.presizedLoad(whole, maximumBytes / expectedEntries);
            slots = (int) Math.min(
                    MAX_SLOTS_PER_SHARD,
                    Math.max(IndexShard.MIN_CAPACITY, Math.ceil(expectedEntries / (double) shards / presizedLoad)));
        }
        return new CacheSizing(pageSize, shards, stripes, slots, maxLoad);
    }

    /**
     * Average entries a page holds at least, when the expected entries say how large an entry
     * is (its share of the budget, index and headroom included): a value past an eighth of a page
     * goes to an extent of its own (a second allocation, and a read through a reader epoch), so
     * a page of {@value} average entries keeps a value of the average size, and some larger, in
     * the page. A small cache of values of a kilobyte had 4 KiB pages (its budget / {@link
     * #TARGET_PAGES}) and put every value in an extent: one thread's GET at 10K entries 375 ns
     * against OHC's 262, inserts 365 against 194. Not more: a page of 32 average entries made
     * a 4,000-entry cache of 256-byte values 94 pages of 16 KiB, too few for compaction to keep
     * up with values that change length, and it evicted (docs/speed-work.md, twenty-seventh
     * session).
     */
    static final int MIN_ENTRIES_PER_PAGE = 8;

    /**
     * The most {@link #MIN_ENTRIES_PER_PAGE} raises a page to: values of more than 4 KiB still go
     * to extents in a small cache, where a record's copy forward (a second chance, a compaction)
     * would otherwise move the whole value.
     */
    static final int MAX_PAGE_FLOOR = 32 * 1024;

    /**
     * The least page size for a cache of {@code maximumBytes} expecting {@code expectedEntries}
     * (0 when unknown): {@link #MIN_ENTRIES_PER_PAGE} entries of its budget's average, up to
     * {@link #MAX_PAGE_FLOOR}.
     */
    static int pageFloorForEntries(long maximumBytes, long expectedEntries) {
        if (expectedEntries <= 0) {
            return 0;
        }
        long perEntry = Math.max(1, maximumBytes / expectedEntries);
        int floor = ceilPow2((int) Math.min(MAX_PAGE_FLOOR / MIN_ENTRIES_PER_PAGE, perEntry) * MIN_ENTRIES_PER_PAGE);
        int roomy =
                ceilPow2((int) Math.min(MAX_PAGE_FLOOR / ROOMY_ENTRIES_PER_PAGE, perEntry) * ROOMY_ENTRIES_PER_PAGE);
        return maximumBytes / roomy >= ROOMY_MIN_PAGES ? Math.max(floor, roomy) : floor;
    }

    /**
     * Average entries a page holds at least when the budget still has {@link #ROOMY_MIN_PAGES} such
     * pages: each page has fixed work (taken, sealed, walked onto, retired, recycled), and a cache
     * of 10K entries of 256-byte values inserted ~4% faster on 16 KiB pages than on 4 KiB ones
     * (docs/speed-work.md, thirty-first session). A few partly filled pages then cost it ~2-3%
     * of its budget.
     */
    static final int ROOMY_ENTRIES_PER_PAGE = 32;

    /**
     * The fewest pages a budget keeps when its pages are raised to {@link #ROOMY_ENTRIES_PER_PAGE}
     * entries: the 4,000-entry cache whose compaction could not keep up on 94 pages keeps its
     * 8-entry pages.
     */
    static final int ROOMY_MIN_PAGES = 128;

    /** Values longer than this go to their own extent instead of a page. */
    public int largeValueThreshold() {
        return pageSize / 8;
    }

    /** The longest key accepted. */
    public int maxKeyLength() {
        return Math.min(RecordLayout.MAX_KEY_LENGTH, pageSize / 4);
    }

    /**
     * Entries a partition holds at least when the partitions are chosen for the caller: below
     * this, two threads' inserts gained nothing from evicting in parallel (5,000 entries each:
     * a partition's eviction batches and slack, a 512th of its bound, are too small), and four
     * partitions of 2,500 were 60% slower (docs/speed-work.md, seventeenth session).
     */
    static final long MIN_PARTITION_ENTRIES = 32 * 1024;

    /** Bytes a partition has at least when the partitions are chosen for the caller. */
    static final long MIN_PARTITION_BYTES = 8L * 1024 * 1024;

    /** The most partitions a cache may be built with. */
    public static final int MAX_PARTITIONS = 256;

    /**
     * How many partitions (each a whole cache over a share of the keys, with its own evictor) a
     * cache gets when the builder does not say: one per core, rounded to a power of two, as long
     * as each keeps {@link #MIN_PARTITION_ENTRIES} and {@link #MIN_PARTITION_BYTES}: entries of
     * the entry bound, or for a cache bounded by bytes alone of its expected entries. Without
     * either it is not split: it may hold a few values that each need much of the budget, and a
     * partition can hold values of its share only. (A cache bounded by bytes, expecting 100K
     * entries of 256 bytes: two threads' inserts 880-980 ns in one, 750-770 in two partitions;
     * docs/speed-work.md, twenty-fourth session.)
     */
    public static int partitions(long maximumBytes, long maximumEntries, long expectedEntries, int cores) {
        long entries = maximumEntries > 0 ? maximumEntries : expectedEntries;
        if (entries <= 0) {
            return 1;
        }
        long n = Math.min(
                Math.min(ceilPow2(cores), entries / MIN_PARTITION_ENTRIES), maximumBytes / MIN_PARTITION_BYTES);
        return (int) Math.max(1, Long.highestOneBit(Math.min(MAX_PARTITIONS, Math.max(1, n))));
    }

    static int ceilPow2(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }
}
