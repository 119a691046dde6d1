package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.RecordLayout;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class CacheSizingTest {

    @Provide
    Arbitrary<Long> budgets() {
        return Arbitraries.oneOf(
                Arbitraries.of(1L, 4096L, 8L << 20, 8L << 20 + 1, 1L << 30, 16L << 30, 1L << 40),
                Arbitraries.longs().between(1, 1L << 42));
    }

    @Provide
    Arbitrary<Integer> cores() {
        return Arbitraries.oneOf(
                Arbitraries.of(1, 2, 3, 8, 12, 64, 256), Arbitraries.integers().between(1, 512));
    }

    @Property(tries = 1000)
    void pageSizeIsAPowerOfTwoWithinBoundsAndGivesAboutTheTargetPageCount(
            @ForAll("budgets") long maximumBytes, @ForAll("cores") int cores) {
        CacheSizing s = CacheSizing.of(maximumBytes, -1, -1, 0, cores);
        assertThat(Integer.bitCount(s.pageSize())).isEqualTo(1);
        assertThat(s.pageSize()).isBetween(CacheSizing.MIN_PAGE_SIZE, CacheSizing.MAX_PAGE_SIZE);
        long pages = maximumBytes / s.pageSize();
        if (s.pageSize() == NativeMemory.HUGE_PAGE) {
            // 1 MiB pages are rounded up to a whole huge page: from half the target to twice it.
            assertThat(pages).isBetween((long) CacheSizing.TARGET_PAGES / 2, 2L * CacheSizing.TARGET_PAGES - 1);
        } else if (s.pageSize() > CacheSizing.MIN_PAGE_SIZE && s.pageSize() < CacheSizing.MAX_PAGE_SIZE) {
            // Rounded down: between the target and twice it.
            assertThat(pages).isBetween((long) CacheSizing.TARGET_PAGES, 2L * CacheSizing.TARGET_PAGES - 1);
        } else if (s.pageSize() == CacheSizing.MIN_PAGE_SIZE) {
            assertThat(pages).isLessThan(2L * CacheSizing.TARGET_PAGES);
        } else {
            assertThat(pages).isGreaterThanOrEqualTo(CacheSizing.TARGET_PAGES);
        }
        // Bigger budgets never get smaller pages.
        CacheSizing bigger = CacheSizing.of(maximumBytes * 2, -1, -1, 0, cores);
        assertThat(bigger.pageSize()).isGreaterThanOrEqualTo(s.pageSize());
    }

    @Test
    void pagesOfAMebibyteOrMoreAreWholeHugePages() {
        // 3 GiB / 2,048 is 1.5 MiB, rounded down to 1 MiB, then up to a 2 MiB huge page.
        assertThat(CacheSizing.of(3L << 30, -1, -1, 0, 2).pageSize()).isEqualTo(NativeMemory.HUGE_PAGE);
        assertThat(CacheSizing.of(2L << 30, -1, -1, 0, 2).pageSize()).isEqualTo(NativeMemory.HUGE_PAGE);
        // Below 1 MiB pages stay as they were; above, they are multiples of the huge page anyway.
        assertThat(CacheSizing.of((2L << 30) - 1, -1, -1, 0, 2).pageSize()).isEqualTo(512 * 1024);
        assertThat(CacheSizing.of(8L << 30, -1, -1, 0, 2).pageSize()).isEqualTo(4 * 1024 * 1024);
    }

    @Property(tries = 1000)
    void shardsArePowersOfTwoAndStripesAreBounded(
            @ForAll("budgets") long maximumBytes,
            @ForAll("cores") int cores,
            @ForAll @IntRange(min = 0, max = 65_536) int concurrencyLevel) {
        CacheSizing s = CacheSizing.of(maximumBytes, -1, -1, concurrencyLevel, cores);
        assertThat(Integer.bitCount(s.shards())).isEqualTo(1);
        if (concurrencyLevel > 0) {
            assertThat(s.shards()).isGreaterThanOrEqualTo(concurrencyLevel).isLessThan(2 * concurrencyLevel);
        } else {
            assertThat(s.shards()).isLessThanOrEqualTo(1 << 16);
            long perCore = Math.max(
                    CacheSizing.MIN_SHARDS_PER_CORE * cores,
                    Math.min(CacheSizing.SHARDS_PER_CORE * cores, maximumBytes / CacheSizing.MIN_BYTES_PER_SHARD));
            assertThat((long) s.shards())
                    .isGreaterThanOrEqualTo(Math.min(1 << 16, CacheSizing.MIN_SHARDS_PER_CORE * cores));
            assertThat((long) s.shards()).isGreaterThanOrEqualTo(Math.min(1 << 16, perCore));
            assertThat((long) s.shards())
                    .isGreaterThanOrEqualTo(Math.min(1 << 16, maximumBytes / CacheSizing.BYTES_PER_SHARD));
            assertThat((long) s.shards()).isLessThan(2 * Math.max(perCore, maximumBytes / CacheSizing.BYTES_PER_SHARD));
            assertThat((long) s.shards())
                    .as("a small budget gets few shards")
                    .isLessThan(2 * Math.max(CacheSizing.MIN_SHARDS_PER_CORE * cores, maximumBytes / (64 * 1024)));
        }
        assertThat(s.writerStripes()).isGreaterThanOrEqualTo(1);
        assertThat(s.writerStripes()).isLessThanOrEqualTo(CacheSizing.ceilPow2(cores));
        long pages = maximumBytes / s.pageSize();
        assertThat((long) s.writerStripes()).isLessThanOrEqualTo(Math.max(1, pages / 16));
        // Without expectations: default slots, default load.
        assertThat(s.initialSlotsPerShard()).isEqualTo(CacheSizing.DEFAULT_INITIAL_SLOTS);
        assertThat(s.maxLoad()).isEqualTo(IndexShard.MAX_LOAD);
    }

    /**
     * NativeCache picks a writer's stripe as {@code threadId & (writerStripes - 1)}, which reaches
     * every stripe only when their number is a power of two. A small cache on a machine with
     * more cores gets {@code pages / 16} stripes, which is not always one.
     */
    @Property(tries = 1000)
    void writerStripesArePowersOfTwo(@ForAll("budgets") long maximumBytes, @ForAll("cores") int cores) {
        CacheSizing s = CacheSizing.of(maximumBytes, -1, -1, 0, cores);
        assertThat(Integer.bitCount(s.writerStripes()))
                .as("%d writer stripes for %d bytes on %d cores", s.writerStripes(), maximumBytes, cores)
                .isEqualTo(1);
    }

    @Test
    void writerStripesOfASmallCacheOnFourCores() {
        // 200,000 bytes: 48 pages of 4 KiB, 48 / 16 = 3 stripes; with the mask, stripe 1 is never used.
        CacheSizing s = CacheSizing.of(200_000, -1, -1, 0, 4);
        assertThat(s.writerStripes()).isIn(1, 2, 4);
    }

    @Property(tries = 1000)
    void presizingFitsTheExpectedEntriesWithoutGrowth(
            @ForAll("budgets") long maximumBytes, @ForAll("cores") int cores, @ForAll("entries") long expectedEntries) {
        CacheSizing s = CacheSizing.of(maximumBytes, expectedEntries, -1, 0, cores);
        long slots = s.initialSlotsPerShard();
        assertThat(slots).isGreaterThanOrEqualTo(IndexShard.MIN_CAPACITY);
        // Evenly spread, every shard takes its share at the presized load, below MAX_LOAD.
        double perShard = expectedEntries / (double) s.shards();
        double load = IndexShard.presizedLoad(expectedEntries, maximumBytes / expectedEntries);
        if (perShard / load > CacheSizing.MAX_SLOTS_PER_SHARD) {
            // A shard's table stays under 2 GiB: presizing stops at the cap, growth beyond it
            // fails with a message asking for a higher concurrencyLevel.
            assertThat(slots).isEqualTo(CacheSizing.MAX_SLOTS_PER_SHARD);
            return;
        }
        assertThat(slots * load).isGreaterThanOrEqualTo(perShard - 1e-6);
        if (perShard >= 16) {
            // the room hasRoomWithoutGrowth gives (at tiny sizes the rounding of slots decides)
            assertThat((long) (slots * s.maxLoad())).isGreaterThanOrEqualTo((long) Math.ceil(perShard));
        }
        // and not much more than that
        assertThat(slots).isLessThanOrEqualTo(Math.max(IndexShard.MIN_CAPACITY, (long) Math.ceil(perShard / load)));
    }

    @Test
    void aSmallCacheIsPresizedAtTheLowerLoadAndAPartitionByTheWholeCache() {
        assertThat(IndexShard.presizedLoad(IndexShard.SMALL_CACHE_ENTRIES, 1000))
                .isEqualTo(IndexShard.SMALL_PRESIZED_LOAD);
        assertThat(IndexShard.presizedLoad(IndexShard.SMALL_CACHE_ENTRIES + 1, IndexShard.ROOMY_ENTRY_BYTES - 1))
                .isEqualTo(IndexShard.PRESIZED_LOAD);
        assertThat(IndexShard.presizedLoad(IndexShard.SMALL_CACHE_ENTRIES + 1, IndexShard.ROOMY_ENTRY_BYTES))
                .as("entries with room for the index's shorter walks")
                .isEqualTo(IndexShard.ROOMY_PRESIZED_LOAD);
        long bytes = 64L << 20;
        CacheSizing small = CacheSizing.of(bytes, 40_000, -1, 4, 4, 1);
        assertThat(small.initialSlotsPerShard())
                .isEqualTo((long) Math.ceil(40_000 / 4.0 / IndexShard.SMALL_PRESIZED_LOAD));
        // One of 16 partitions of a 640,000-entry cache: a large cache's load, though its own
        // share is small; at ~1.6 KB of budget per entry, the roomy one, and at 100 bytes the dense one.
        CacheSizing partition = CacheSizing.of(bytes, 40_000, -1, 4, 4, 16);
        assertThat(partition.initialSlotsPerShard())
                .isEqualTo((long) Math.ceil(40_000 / 4.0 / IndexShard.ROOMY_PRESIZED_LOAD));
        CacheSizing dense = CacheSizing.of(4_000_000, 40_000, -1, 4, 4, 16);
        assertThat(dense.initialSlotsPerShard()).isEqualTo((long) Math.ceil(40_000 / 4.0 / IndexShard.PRESIZED_LOAD));
    }

    @Provide
    Arbitrary<Long> entries() {
        return Arbitraries.oneOf(
                Arbitraries.of(1L, 7L, 1000L, 1_000_000L), Arbitraries.longs().between(1, 1L << 30));
    }

    @Property(tries = 1000)
    void anIndexBudgetSetsTheSlotsAndTheLoadFactor(
            @ForAll("budgets") long maximumBytes,
            @ForAll("cores") int cores,
            @ForAll("entries") long expectedEntries,
            @ForAll @IntRange(min = 1, max = 200) int bytesPerEntryTimesTen) {
        long indexBudget = Math.max(8, expectedEntries * bytesPerEntryTimesTen / 10);
        CacheSizing s = CacheSizing.of(maximumBytes, expectedEntries, indexBudget, 0, cores);
        long slots = s.initialSlotsPerShard();
        assertThat(slots).isGreaterThanOrEqualTo(IndexShard.MIN_CAPACITY);
        assertThat(slots).isLessThanOrEqualTo(CacheSizing.MAX_SLOTS_PER_SHARD);
        if (slots > IndexShard.MIN_CAPACITY && slots < CacheSizing.MAX_SLOTS_PER_SHARD) {
            // The tables fit the index budget.
            assertThat(slots * s.shards() * 8).isLessThanOrEqualTo(indexBudget);
            assertThat((slots + 1) * s.shards() * 8).isGreaterThan(indexBudget);
        }
        assertThat(s.maxLoad()).isBetween(IndexShard.MAX_LOAD, IndexShard.HARD_MAX_LOAD);
        double load = expectedEntries / (double) (indexBudget / 8);
        if (load > IndexShard.MAX_LOAD && load < IndexShard.HARD_MAX_LOAD) {
            assertThat(s.maxLoad()).isEqualTo(load);
        }
    }

    @Property(tries = 500)
    void aMaximalKeyWithTheLargestInlineValueFitsInAPage(
            @ForAll("budgets") long maximumBytes, @ForAll boolean expires) {
        CacheSizing s = CacheSizing.of(maximumBytes, -1, -1, 0, 4);
        assertThat(s.largeValueThreshold()).isEqualTo(s.pageSize() / 8);
        assertThat(s.maxKeyLength()).isEqualTo(Math.min(RecordLayout.MAX_KEY_LENGTH, s.pageSize() / 4));
        assertThat(RecordLayout.maxRecordSize(s.maxKeyLength(), s.largeValueThreshold(), expires, false))
                .isLessThanOrEqualTo(s.pageSize());
        assertThat(RecordLayout.maxRecordSize(s.maxKeyLength(), Integer.MAX_VALUE, expires, true))
                .isLessThanOrEqualTo(s.pageSize());
    }

    @Test
    void ceilPow2() {
        assertThat(CacheSizing.ceilPow2(-5)).isEqualTo(1);
        assertThat(CacheSizing.ceilPow2(0)).isEqualTo(1);
        assertThat(CacheSizing.ceilPow2(1)).isEqualTo(1);
        assertThat(CacheSizing.ceilPow2(2)).isEqualTo(2);
        assertThat(CacheSizing.ceilPow2(3)).isEqualTo(4);
        assertThat(CacheSizing.ceilPow2(4)).isEqualTo(4);
        assertThat(CacheSizing.ceilPow2(5)).isEqualTo(8);
        assertThat(CacheSizing.ceilPow2(65_535)).isEqualTo(65_536);
        assertThat(CacheSizing.ceilPow2(65_536)).isEqualTo(65_536);
        assertThat(CacheSizing.ceilPow2(1 << 30)).isEqualTo(1 << 30);
    }

    @Test
    void knownSizes() {
        // 64 MiB on 2 cores: 32 KiB pages, 64 shards (32 per core), 2 stripes.
        CacheSizing s = CacheSizing.of(64L << 20, -1, -1, 0, 2);
        assertThat(s.pageSize()).isEqualTo(32 * 1024);
        assertThat(s.shards()).isEqualTo(64);
        // 256 KiB on 2 cores: 4 shards of 64 KiB would do, but never fewer than 4 per core.
        assertThat(CacheSizing.of(256L << 10, -1, -1, 0, 2).shards()).isEqualTo(8);
        // 1 MiB on 2 cores: one shard per 64 KiB, 16.
        assertThat(CacheSizing.of(1L << 20, -1, -1, 0, 2).shards()).isEqualTo(16);
        assertThat(s.writerStripes()).isEqualTo(2);
        // 1 MiB: 4 KiB pages (the floor), 256 pages, so 16 stripes at most; 2 cores give 2.
        s = CacheSizing.of(1L << 20, -1, -1, 0, 2);
        assertThat(s.pageSize()).isEqualTo(4096);
        assertThat(s.writerStripes()).isEqualTo(2);
        // 64 KiB on 16 cores: 16 pages allow one stripe only.
        s = CacheSizing.of(64L << 10, -1, -1, 0, 16);
        assertThat(s.writerStripes()).isEqualTo(1);
        // 1 TiB: 8 MiB pages (the ceiling), 16384 shards.
        s = CacheSizing.of(1L << 40, -1, -1, 0, 8);
        assertThat(s.pageSize()).isEqualTo(8 << 20);
        assertThat(s.shards()).isEqualTo(16_384);
        // 1M expected entries (of 67 bytes) over 64 shards at load 0.8: 19,532 slots each, 15,625
        // entries, and growth past 0.86: 16,797 entries, 7.5% over the share.
        s = CacheSizing.of(64L << 20, 1_000_000, -1, 0, 2);
        assertThat(s.shards()).isEqualTo(64);
        assertThat(s.initialSlotsPerShard()).isEqualTo(19_532);
        assertThat(s.maxLoad()).isEqualTo(IndexShard.PRESIZED_MAX_LOAD);
    }

    @Property(tries = 500)
    void pagesHoldAValueOfTheAverageEntrysSizeUpToFourKibibytes(
            @ForAll @IntRange(min = 1, max = 100_000_000) int entries,
            @ForAll @IntRange(min = 16, max = 200_000) int bytesPerEntry,
            @ForAll("cores") int cores) {
        long maximumBytes = (long) entries * bytesPerEntry;
        CacheSizing s = CacheSizing.of(maximumBytes, entries, -1, 0, cores);
        assertThat(Integer.bitCount(s.pageSize())).isEqualTo(1);
        assertThat(s.largeValueThreshold())
                .isGreaterThanOrEqualTo(Math.min(bytesPerEntry, CacheSizing.MAX_PAGE_FLOOR / 8));
        // Never smaller than without the expected entries; raised only up to the floor's ceiling.
        int without = CacheSizing.of(maximumBytes, -1, -1, 0, cores).pageSize();
        assertThat(s.pageSize()).isGreaterThanOrEqualTo(without);
        if (s.pageSize() > without) {
            assertThat(s.pageSize()).isLessThanOrEqualTo(CacheSizing.MAX_PAGE_FLOOR);
        }
    }

    @Test
    void theExpectedEntriesRaiseTheSmallPagesOfASmallCache() {
        // 2,000 entries of ~1 KiB: 2.2 MB / 2,048 is 1 KiB, 4 KiB pages, and 1 KiB values would
        // each get an extent; 8 entries of 1,100 bytes make 16 KiB pages, a 2 KiB threshold (32
        // entries would leave 67 pages of 32 KiB: too few, see the next test).
        CacheSizing s = CacheSizing.of(2_000L * 1100, 2_000, -1, 0, 2);
        assertThat(s.pageSize()).isEqualTo(16 * 1024);
        assertThat(s.largeValueThreshold()).isEqualTo(2048);
        assertThat(CacheSizing.of(2_000L * 1100, -1, -1, 0, 2).pageSize()).isEqualTo(4096);
        // Smaller entries keep the 4 KiB floor: 4,000 of 256-byte values (~380 bytes of budget
        // each), 8 of them in 3,040 bytes.
        assertThat(CacheSizing.of(4_000L * 380, 4_000, -1, 0, 2).pageSize()).isEqualTo(4096);
        // 600-byte values (~800 bytes each): 8 KiB pages, a 1 KiB threshold instead of 512.
        assertThat(CacheSizing.of(5_000L * 800, 5_000, -1, 0, 2).largeValueThreshold())
                .isEqualTo(1024);
        // Large caches already have larger pages: 1M entries of ~380 bytes, 128 KiB.
        assertThat(CacheSizing.of(1_000_000L * 380, 1_000_000, -1, 0, 2).pageSize())
                .isEqualTo(128 * 1024);
        // Huge values stay in extents: the floor stops at 32 KiB (a 4 KiB threshold).
        assertThat(CacheSizing.pageFloorForEntries(2_000L * 100_000, 2_000)).isEqualTo(CacheSizing.MAX_PAGE_FLOOR);
        assertThat(CacheSizing.pageFloorForEntries(1L << 20, -1)).isZero();
    }

    @Test
    void aBudgetWithRoomForEnoughPagesGetsPagesOfThirtyTwoEntries() {
        // 10,000 entries of ~380 bytes: 32 of them in 12,160 bytes, 16 KiB pages, and the 3.8 MB
        // budget still holds 231 of them.
        assertThat(CacheSizing.of(10_000L * 380, 10_000, -1, 0, 2).pageSize()).isEqualTo(16 * 1024);
        // 10,000 of ~1,100 bytes: 32 KiB pages (335 of them).
        assertThat(CacheSizing.of(10_000L * 1100, 10_000, -1, 0, 2).pageSize()).isEqualTo(32 * 1024);
        // Below 128 such pages the 8-entry floor stays: 5,000 entries of ~380 bytes would have
        // 115 pages of 16 KiB, and keep 4 KiB ones (464 of them).
        assertThat(CacheSizing.of(5_000L * 380, 5_000, -1, 0, 2).pageSize()).isEqualTo(4096);
        assertThat(CacheSizing.pageFloorForEntries(5_000L * 380, 5_000)).isEqualTo(4096);
        // Never past the floor's ceiling, whatever the budget.
        assertThat(CacheSizing.pageFloorForEntries(1_000_000L * 4_000, 1_000_000))
                .isEqualTo(CacheSizing.MAX_PAGE_FLOOR);
    }
}
