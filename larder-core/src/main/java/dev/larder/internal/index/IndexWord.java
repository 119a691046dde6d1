package dev.larder.internal.index;

/**
 * One 64-bit slot of the hash index: enough to find an entry's record and to rule out almost
 * every non-matching key without touching the record.
 *
 * <pre>
 *  63            48 47      40 39                                    0
 * +----------------+----------+---------------------------------------+
 * |  tag (16 bits) | dist + 1 |  location: byte address in the log    |
 * +----------------+----------+---------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>tag: bits 48-63 of the key's hash; a probe compares it before reading any key bytes,
 *       so a false match costs a key comparison once in 65,536 probes.
 *   <li>dist + 1: how far the word sits from its home slot (Robin Hood displacement), plus one
 *       so an occupied word is never 0. 0 is the empty slot.
 *   <li>location: {@code page * pageSize + offset}, an offset into the cache's log, never a raw
 *       address, so the same word stays valid if the pages are files mapped elsewhere after a
 *       restart. 40 bits address 1 TiB of records.
 * </ul>
 *
 * The hash's other bits feed the shard (bits 32-47) and the home slot (bits 0-31), so the
 * three uses are independent.
 */
public final class IndexWord {
    public static final long EMPTY = 0L;
    public static final int TAG_SHIFT = 48;
    public static final int DIST_SHIFT = 40;
    public static final long LOCATION_MASK = (1L << DIST_SHIFT) - 1;
    public static final int MAX_DIST = 254;
    public static final long MAX_LOCATION = LOCATION_MASK;
    /** The bits of the dist field: a word's dist + 1, 0 in an empty word. */
    public static final long DIST_FIELD = 0xFFL << DIST_SHIFT;
    /** One more dist: added to a word (whose dist is under {@link #MAX_DIST}) it moves one slot on. */
    public static final long DIST_ONE = 1L << DIST_SHIFT;

    private IndexWord() {}

    public static long word(long tag, int dist, long location) {
        return (tag << TAG_SHIFT) | ((long) (dist + 1) << DIST_SHIFT) | location;
    }

    public static long tagOf(long hash) {
        return hash >>> TAG_SHIFT;
    }

    public static long tag(long word) {
        return word >>> TAG_SHIFT;
    }

    public static int dist(long word) {
        return (int) ((word >>> DIST_SHIFT) & 0xFF) - 1;
    }

    /**
     * Whether a probe that has come {@code d} slots from its key's home stops at {@code word}:
     * the slot is empty, or its word is nearer its own home, so the key cannot be further on
     * (Robin Hood order). One compare: an empty word's dist reads as -1. Written as two tests,
     * {@code dist} was called only when the slot was not empty, which a table filling up rarely
     * had, and C2 compiled it as a call (~40 instructions of an insert at 1M entries; fifty-ninth
     * session).
     */
    public static boolean endsProbe(long word, int d) {
        return dist(word) < d;
    }

    public static long location(long word) {
        return word & LOCATION_MASK;
    }

    public static long withDist(long word, int dist) {
        return (word & ~(0xFFL << DIST_SHIFT)) | ((long) (dist + 1) << DIST_SHIFT);
    }

    public static long withLocation(long word, long location) {
        return (word & ~LOCATION_MASK) | location;
    }

    public static int shardBits(long hash) {
        return (int) (hash >>> 32) & 0xFFFF;
    }

    /** The home slot in a table of {@code capacity} slots (any capacity, not only powers of 2). */
    public static int homeSlot(long hash, int capacity) {
        return (int) (((hash & 0xFFFFFFFFL) * capacity) >>> 32);
    }
}
