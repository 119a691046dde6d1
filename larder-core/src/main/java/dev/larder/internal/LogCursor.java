package dev.larder.internal;

import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;

/**
 * The evictor's position in one stripe's FIFO of pages: the oldest record it has not yet passed.
 * {@link #next} looks at that record without moving; {@link #advance} moves past it once the
 * evictor has dealt with it. When the cursor passes the end of a sealed page the page leaves
 * its queue, and the evictor retires it.
 *
 * <p>Used only by the evictor, under the cache's maintenance lock.
 */
final class LogCursor {
    enum Next {
        /** A decided record is under the cursor: see the fields. */
        RECORD,
        /** The queue has no record to look at now. */
        NOTHING,
        /** A writer is between reserving the record and installing it, or sealing its page. */
        WAITING,
        /** Nothing looked at, but the walk can go on at once. */
        BUSY,
        /** The cursor passed a page's end: {@link #retiredPage} left the queue. */
        PAGE_RETIRED
    }

    /** The stripe whose FIFO of pages this cursor walks, and the queue of those pages. */
    final int stripe;

    final int queue;

    /**
     * Whether this FIFO's records were appended by puts (a writer stripe's), whose writes the
     * evictor counts in the sketch as it passes them ({@code Evictor.act} on a cursor).
     */
    final boolean holdsPuts;

    /** Whether the record under the cursor has had its put counted already (reset by {@link #advance}). */
    boolean putCounted;

    private final PageStore store;
    private int page = -1;
    private long offset;

    // The record under the cursor after next() returned RECORD.
    final RecordLayout.Header header = new RecordLayout.Header();
    MemorySegment segment;
    long location;
    /** Where the record ends (kept apart: header is reused while judging it). */
    long end;
    /**
     * Whether the record's page is sealed (no writer appends to it any more), as last asked of
     * the store: a page sealed since may still read false.
     */
    boolean sealed;

    /**
     * Whether the fields above describe the record under the cursor, parsed by the last {@link
     * #next}: until the cursor moves, {@link #next} answers from them. What can change in a
     * decided record meanwhile is not read from them: its ACCESS bits ({@link #access} reads
     * the record), a padded record's value length (the evictor parses it again under the shard's
     * lock), and whether an index word still leads to it (the evictor looks). The main queue's
     * victim faces one candidate after another, and parsing it again for each duel was ~100
     * instructions of an insert at 10K entries (docs/speed-work.md, forty-fourth session).
     */
    private boolean parsed;

    /** Where the page's records end, as last asked of the store (final once sealed). */
    private long limit = -1;

    /** After PAGE_RETIRED: the page that left the queue. */
    int retiredPage = -1;

    /**
     * For tests: runs between the two questions {@link #next} asks the store about a page's end,
     * where a writer appending and sealing once let the cursor retire a page with live records
     * (LogCursorTest). Null in a cache.
     */
    Runnable betweenEndQuestions;

    LogCursor(PageStore store, int stripe) {
        this.store = store;
        this.stripe = stripe;
        this.queue = store.queueOfStripe(stripe);
        this.holdsPuts = stripe < store.writerStripes();
    }

    /**
     * Looks at the oldest record not yet passed.
     *
     * @param mayTakeActive whether a page writers still append to may be sealed so that the
     *     cursor can pass it (only when memory is needed)
     */
    Next next(boolean mayTakeActive) {
        if (parsed) {
            return Next.RECORD;
        }
        // Small enough for the compiler to inline into the evictor (366 bytes in one method
        // were not): the common case is a record among those already known on the page.
        if (page >= 0 && offset < limit) {
            return recordAtOffset();
        }
        return nextAtPageEdge(mayTakeActive);
    }

    /** {@link #next} when the cursor has no page or has used up the records known on it. */
    private Next nextAtPageEdge(boolean mayTakeActive) {
        if (page < 0) {
            int oldest = store.oldestPage(stripe);
            if (oldest < 0) {
                return Next.NOTHING; // nothing to reset for a FIFO that holds no page
            }
            page = oldest;
            pageRefused = false;
            recordsOnPage = -1;
            tookOnPage = 0;
            offset = 0;
            sealed = false;
            limit = -1;
        }
        if (offset >= limit) {
            // Ask the store only when the records known so far are used up: a page's end only
            // grows until it is sealed, and each question takes the store's lock. Whether it is
            // sealed is asked first: read after the end, a seal in between (with records appended
            // before it) would pair an old end with "sealed", and the page would be retired with
            // live records past that end.
            boolean sealedNow = store.isSealed(page);
            if (betweenEndQuestions != null) {
                betweenEndQuestions.run();
            }
            long end = store.limit(page);
            if (end < 0) {
                return Next.WAITING; // being sealed by its stripe
            }
            limit = end;
            sealed = sealedNow;
        }
        if (offset >= limit) {
            if (!sealed) {
                // The evictor's own active page can always go: only the evictor appends to it.
                if (!mayTakeActive && !store.isEvictorPage(page)) {
                    return Next.NOTHING;
                }
                store.sealActive(page);
                limit = store.limit(page);
                sealed = store.isSealed(page);
                if (limit < 0 || !sealed) {
                    return Next.WAITING; // its stripe is sealing it
                }
            }
            if (offset < limit) {
                return Next.BUSY; // sealed with more records than we saw: walk them
            }
            store.dequeueOldest(stripe);
            retiredPage = page;
            page = -1;
            return Next.PAGE_RETIRED;
        }
        return recordAtOffset();
    }

    /** The record at {@link #offset}, below {@link #limit}: RECORD, or WAITING if not yet installed. */
    private Next recordAtOffset() {
        segment = store.pageById(page);
        if ((RecordLayout.layout(segment, offset) & RecordLayout.DECIDED) == 0) {
            return Next.WAITING; // a writer is between reserving and installing this record
        }
        header.parse(segment, offset, limit, store.shapes());
        location = store.location(page, offset);
        end = header.end;
        parsed = true;
        return Next.RECORD;
    }

    /**
     * For the evictor's own stripes: seals the page under the cursor if it is still the stripe's
     * active page, so that records copied from it land on a fresh page. Returns whether the page
     * is sealed.
     */
    boolean sealOwnPage() {
        if (!sealed && store.isEvictorPage(page)) {
            store.sealActive(page);
            sealed = store.isSealed(page);
            limit = store.limit(page);
        }
        return sealed;
    }

    /**
     * Whether the record the last {@link #next} returned is on a sealed page: the page can then
     * be moved whole ({@code Evictor.movePageWhole}), the records before this one having been
     * dealt with.
     */
    boolean onSealedPage() {
        return page >= 0 && sealed;
    }

    /**
     * Whether the page under the cursor was looked at for a move whole and refused: it is not
     * looked at again (each look reads every record on it) until the cursor is on another page.
     */
    boolean pageRefused;

    /**
     * The records the page under the cursor holds in all, once a look at it for a move whole found
     * it movable but for its queue's excess ({@code Evictor.PAGE_WAITS}); else -1.
     */
    int recordsOnPage = -1;

    /**
     * Records of the window the evictor took off the page under the cursor (moved or evicted
     * them), counted here rather than on the page ({@code Evictor.took}).
     */
    int tookOnPage;

    /** Where on its page the record the last {@link #next} returned starts. */
    long offset() {
        return offset;
    }

    /** The page under the cursor (after {@link #next} returned RECORD). */
    int page() {
        return page;
    }

    /** Where the records of the page under the cursor end (final once it is sealed). */
    long limit() {
        return limit;
    }

    /** The page under the cursor went to another FIFO whole: the cursor goes on with its next page. */
    void pageMoved() {
        parsed = false;
        page = -1;
        recordsOnPage = -1;
        tookOnPage = 0;
        putCounted = false;
    }

    /** Moves past the record the last {@link #next} returned. */
    void advance() {
        parsed = false;
        offset = end;
        putCounted = false;
    }

    /** The access count readers left in the record under the cursor. */
    int access() {
        return RecordLayout.access(segment, store.offset(location));
    }
}
