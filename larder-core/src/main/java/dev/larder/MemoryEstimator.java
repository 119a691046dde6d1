package dev.larder;

import dev.larder.internal.CacheSizing;
import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.LargeValueStore;
import dev.larder.internal.memory.RecordLayout;
import dev.larder.internal.policy.FrequencySketch;

/**
 * Predicts the native memory a cache needs before it is built, from the same layout constants
 * the cache uses: records packed in pages (a 1-byte header, two varint lengths, the key and the
 * value), values above the large-value threshold in extents of their own, and an index of 8-byte
 * words at its average load factor.
 *
 * <pre>{@code
 * MemoryEstimate e = MemoryEstimator.estimate(10_000_000, 16, 256);
 * LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
 *         .maximumBytes(e.recommendedMaximumBytes())
 *         .expectedEntries(10_000_000)
 *         .build();
 * }</pre>
 */
public final class MemoryEstimator {
    /** The index's mean load factor while it grows by 1.25x between 0.64 and 0.8. */
    static final double GROWING_INDEX_LOAD = 0.72;

    /**
     * The live share of the record pages that {@link MemoryEstimate#recommendedMaximumBytesForChangingLengths}
     * leaves before any padding: records padded up to a quarter longer (values that vary by a
     * quarter either way) then stay under {@link CacheSizing#PAD_BELOW}.
     */
    static final double CHANGING_LENGTHS_LIVE_SHARE = CacheSizing.PAD_BELOW / 1.3;

    private MemoryEstimator() {}

    /** The estimate for a cache presized with {@code expectedEntries(entries)}, no expiry. */
    public static MemoryEstimate estimate(long entries, int averageKeyBytes, int averageValueBytes) {
        return estimate(entries, averageKeyBytes, averageValueBytes, false, true);
    }

    /**
     * The estimate for {@code entries} entries of the given average sizes.
     *
     * @param withExpiry whether entries carry a deadline (any expiry setting or per-entry TTL)
     * @param presized whether the builder gets {@code expectedEntries(entries)}
     * @throws IllegalArgumentException if a count or size is out of range
     */
    public static MemoryEstimate estimate(
            long entries, int averageKeyBytes, int averageValueBytes, boolean withExpiry, boolean presized) {
        if (entries <= 0) {
            throw new IllegalArgumentException("entries must be positive, was " + entries);
        }
        if (averageKeyBytes <= 0 || averageKeyBytes > RecordLayout.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(
                    "averageKeyBytes must be in [1, " + RecordLayout.MAX_KEY_LENGTH + "], was " + averageKeyBytes);
        }
        if (averageValueBytes < 0) {
            throw new IllegalArgumentException("averageValueBytes must not be negative, was " + averageValueBytes);
        }
        // The page size and a presized index's load depend on the budget: size for records
        // first, then settle. The load only rises with a budget that falls under a threshold
        // (IndexShard.presizedLoad), so the rounds settle; the last has the budget's own load.
        long budget = entries * (long) (averageKeyBytes + averageValueBytes) + entries * 10;
        MemoryEstimate estimate = null;
        double load = 0;
        for (int round = 0; round < 3 || round < 8 && load != indexLoad(entries, budget, presized); round++) {
            load = indexLoad(entries, budget, presized);
            long indexBytes = (long) Math.ceil(entries * 8.0 / load);
            CacheSizing sizing = CacheSizing.of(budget, presized ? entries : -1, -1, -1, cores());
            boolean large = averageValueBytes > sizing.largeValueThreshold();
            double padding = withExpiry ? 8 + 3.5 : 0;
            double record = 1
                    + varint(averageKeyBytes)
                    + varint(averageValueBytes)
                    + averageKeyBytes
                    + (large ? RecordLayout.EXTENT_ID_BYTES : averageValueBytes)
                    + padding;
            long recordBytes = (long) Math.ceil(entries * record);
            // A cache's extents come in size classes (LargeValueStore): up to a sixteenth more.
            long largeBytes = large ? entries * LargeValueStore.classExtentBytes(averageValueBytes) : 0;
            // Records do not span pages: the tail of each page that no whole record fits is lost.
            long perPage = Math.max(1, (long) (sizing.pageSize() / Math.ceil(record)));
            long pageBytes = (entries + perPage - 1) / perPage * sizing.pageSize();
            // Each writer stripe and the evictor's three stripes (window, probation, protected)
            // hold one partly filled page, and maintenance
            // keeps a batch of pages free (1/64 of them, 1 to 16) so writers rarely wait.
            long batch = Math.max(1, Math.min(16, budget / sizing.pageSize() / 64));
            long slack = pageBytes - recordBytes + (sizing.writerStripes() + 3 + batch + 1) * sizing.pageSize();
            long sketchBytes = FrequencySketch.bytesFor(entries);
            long total = recordBytes + largeBytes + indexBytes + sketchBytes + slack;
            // Enough that the live share stays a margin below the compaction threshold.
            long headroom = (long) Math.ceil(pageBytes * (1 / (CacheSizing.COMPACT_BELOW - 0.05) - 1));
            // Values that change length are padded and rewritten in place only while live records
            // fill under PAD_BELOW of the room: start well under it, for the padding to grow into.
            long changingHeadroom = (long) Math.ceil(pageBytes * (1 / CHANGING_LENGTHS_LIVE_SHARE - 1));
            estimate = new MemoryEstimate(
                    entries,
                    recordBytes,
                    largeBytes,
                    indexBytes,
                    sketchBytes,
                    slack,
                    total,
                    headroom,
                    changingHeadroom);
            budget = total + headroom;
        }
        return estimate;
    }

    /** The load of the index of a cache of {@code entries} given {@code budget} (see the builder). */
    private static double indexLoad(long entries, long budget, boolean presized) {
        return presized ? IndexShard.presizedLoad(entries, budget / entries) : GROWING_INDEX_LOAD;
    }

    private static int varint(int value) {
        return RecordLayout.varintSize(value);
    }

    private static int cores() {
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * A prediction of native memory.
     *
     * @param entries the entries it is for
     * @param recordBytes records in pages: headers, keys and small values
     * @param largeValueBytes values stored in extents of their own
     * @param indexBytes the hash index
     * @param sketchBytes the admission policy's frequency sketch (3 bytes per entry, 4 KiB at least)
     * @param pageSlackBytes page tails no record fits, partly filled pages and headroom
     * @param totalBytes the memory the entries occupy once written: the sum of the above
     * @param overwriteHeadroomBytes room for the dead records that overwrites leave behind until
     *     compaction reclaims them; without it, a full cache evicts live entries to make room
     * @param changingLengthsHeadroomBytes the same for values whose length changes when they are
     *     overwritten, with room for their records to be padded (see {@link
     *     #recommendedMaximumBytesForChangingLengths})
     */
    public record MemoryEstimate(
            long entries,
            long recordBytes,
            long largeValueBytes,
            long indexBytes,
            long sketchBytes,
            long pageSlackBytes,
            long totalBytes,
            long overwriteHeadroomBytes,
            long changingLengthsHeadroomBytes) {

        /** Total bytes per entry once written. */
        public double bytesPerEntry() {
            return (double) totalBytes / entries;
        }

        /** The index's share of the total. */
        public double indexShare() {
            return (double) indexBytes / totalBytes;
        }

        /**
         * The {@code maximumBytes} that holds the entries and keeps them while they are
         * overwritten: the total plus the overwrite headroom.
         */
        public long recommendedMaximumBytes() {
            return totalBytes + overwriteHeadroomBytes;
        }

        /**
         * The {@code maximumBytes} for entries whose values change length when they are
         * overwritten (by up to about a quarter either way of the average): enough that their
         * records are padded and such overwrites rewritten in place, as they are only while the
         * budget has bytes to spare; with {@link #recommendedMaximumBytes()} each of them appends
         * a new record, several times slower. About a third more than that.
         */
        public long recommendedMaximumBytesForChangingLengths() {
            return totalBytes + changingLengthsHeadroomBytes;
        }
    }
}
