package dev.larder.internal;

/**
 * Moves entry slots between the partitions of one cache, so that their bounds follow where the
 * keys are. Each partition starts with an equal share of the cache's entry bound, but keys do
 * not split exactly evenly: a cache of 100,000 entries filled with 100,000 keys would otherwise
 * hold ~100 fewer than it was filled with, evict them, and turn later overwrites of those keys
 * into inserts and evictions (one thread's overwrites at 100K entries were 35% slower so;
 * docs/speed-work.md, twentieth session). A partition past its bound borrows from the one with
 * the most spare slots before it evicts; the bounds always add up to the cache's.
 *
 * <p>Once no partition has a spare slot (the cache is full, its partitions evicting on their
 * own), lending stops until an entry is removed: a full cache's writers do not look at the other
 * partitions at all. Slots that eviction or expiry leave free are not lent.
 */
final class EntryLender {
    /** The most slots lent at once: a lender keeps at least half of its spare ones. */
    private static final long MAX_LOAN = 64;

    private final NativeCache<?, ?>[] parts;
    /** False once a look found no spare slot in any partition; true again on a removal. */
    private volatile boolean mayLend = true;

    EntryLender(NativeCache<?, ?>[] parts) {
        this.parts = parts;
    }

    /**
     * Moves spare slots of the partition with the most to {@code borrower}; returns false (and
     * stops lending until a removal) if no other partition has a spare one.
     */
    boolean lend(NativeCache<?, ?> borrower) {
        if (!mayLend) {
            return false;
        }
        synchronized (this) {
            NativeCache<?, ?> richest = null;
            long most = 0;
            for (NativeCache<?, ?> part : parts) {
                long spare = part == borrower ? 0 : part.spareEntries();
                if (spare > most) {
                    most = spare;
                    richest = part;
                }
            }
            if (richest == null) {
                mayLend = false;
                return false;
            }
            long loan = Math.max(1, Math.min(MAX_LOAN, most / 2));
            richest.moveEntryBound(-loan);
            borrower.moveEntryBound(loan);
            return true;
        }
    }

    /** An entry was removed: a partition may have a slot to lend again. */
    void spareAppeared() {
        if (!mayLend) {
            mayLend = true;
        }
    }
}
