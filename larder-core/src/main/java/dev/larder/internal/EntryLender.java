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
 * own), lending stops until a removal leaves its partition a spare slot: a full cache's writers do
 * not look at the other partitions at all, and a removal that leaves none (the common case in a
 * full cache, which keeps two eviction batches free) costs one look at its own partition, not a
 * synchronized look at all of them. Slots that eviction or expiry leave free are not lent.
 *
 * <p>The flag is a handshake (Dekker's): a lender that finds nothing clears it, then looks once
 * more; a removal lowers its partition's entry count (an atomic), then looks at the flag. Either
 * the second look sees the removal's slot, or the removal sees the cleared flag and sets it, so a
 * spare slot is never left unlent while the flag says there is none.
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
            NativeCache<?, ?> richest = richestBesides(borrower);
            if (richest == null) {
                mayLend = false; // a volatile write: a full fence before the second look
                richest = richestBesides(borrower);
                if (richest == null) {
                    return false;
                }
                mayLend = true;
            }
            long spare = richest.spareEntries(); // again: inserts may have taken some meanwhile
            if (spare <= 0) {
                return false; // the borrower evicts this once; lending stays on
            }
            long loan = Math.max(1, Math.min(MAX_LOAN, spare / 2));
            richest.moveEntryBound(-loan);
            borrower.moveEntryBound(loan);
            return true;
        }
    }

    /** The partition other than {@code borrower} with the most spare slots, or null if none has one. */
    private NativeCache<?, ?> richestBesides(NativeCache<?, ?> borrower) {
        NativeCache<?, ?> richest = null;
        long most = 0;
        for (NativeCache<?, ?> part : parts) {
            long spare = part == borrower ? 0 : part.spareEntries();
            if (spare > most) {
                most = spare;
                richest = part;
            }
        }
        return richest;
    }

    /**
     * An entry of {@code part} was removed (its count already lowered): lending starts again if
     * that left the partition a slot to lend.
     */
    void entryRemoved(NativeCache<?, ?> part) {
        if (!mayLend && part.spareEntries() > 0) {
            mayLend = true;
        }
    }

    /** Whether a lend may find a spare slot (false once a look found none). */
    boolean mayLend() {
        return mayLend;
    }
}
