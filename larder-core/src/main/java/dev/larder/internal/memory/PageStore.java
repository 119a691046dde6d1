package dev.larder.internal.memory;

import dev.larder.internal.hash.KeyHash;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The log of records: fixed-size pages of native memory, filled by appending and reclaimed a
 * whole page at a time in first-in, first-out order.
 *
 * <p>Writers append through one of a few <em>stripes</em>, each with its own active page and a
 * cursor word {@code page << 32 | top}; a writer reserves its record's exact size with one CAS on
 * its stripe's cursor, so writers on different stripes never meet and writers on one stripe
 * share a CAS, not a lock. A full page is sealed and the stripe takes a fresh one (under the
 * stripe's lock, once per page). Every page enters the FIFO when it becomes active; the evictor
 * walks the FIFO's oldest page record by record, and once it has passed a sealed page's end
 * the page is retired, then zeroed and reused after a reader grace period (a small page is
 * zeroed when it is taken again: see {@link #zeroOnTake}).
 *
 * <p>A location is {@code pageId * pageSize + offset}: an offset in the log, not an address.
 * Each page is its own native block (or, with huge pages advised, a place in a slab whose memory
 * it gives back on its own: {@link PageSlabs}), so the budget can hand memory from records to large
 * values or the index by freeing whole pages.
 *
 * <p>The log is three queues: the <em>window</em>, where writers append every new record; the
 * <em>probation</em> queue, where the evictor copies the records its admission policy lets into
 * the main space; and the <em>protected</em> queue, where it copies main records that were read
 * while on probation. Each stripe has its own FIFO of pages, so an active page of one writer
 * never stands in front of another's full pages: the window is the FIFOs of the writer stripes
 * and of the evictor's window stripe; probation and protected are the FIFOs of the evictor's
 * last two stripes.
 *
 * <p>Free pages beyond a small reserve go to writers; the reserve is kept for the evictor, which
 * needs room to copy forward the records it keeps.
 */
public final class PageStore {
    public static final long NO_PAGE = -1L;
    /** The queue writers append to: new records wait here for admission. */
    public static final int WINDOW = 0;
    /** The queue of admitted records not read since they were admitted (main's victims come from here). */
    public static final int PROBATION = 1;
    /** The queue of main records read while on probation. */
    public static final int PROTECTED = 2;

    private static final int QUEUES = 3;
    private static final VarHandle CURSOR = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle DEADLINE = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle FIFO_SIZE = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle QUEUED = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle SEALED_TOP = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle PAGE_STRIPE = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle PAGE_STATE = MethodHandles.arrayElementVarHandle(long[].class);

    /** A page's state word: its queue in the top byte, the records writers took out of it below. */
    private static final int STATE_QUEUE_SHIFT = 56;

    private static final long STATE_LEFT_MASK = (1L << STATE_QUEUE_SHIFT) - 1;
    private static final int STRIDE = 16;

    private final int pageSize;

    /** The largest page that {@link #zeroOnTake} applies to. */
    static final int ZERO_ON_TAKE_MAX_PAGE = 16 * 1024;

    /**
     * Whether a recycled page is zeroed by the thread that takes it from the free pool rather
     * than by the evictor that recycles it: for pages up to {@link #ZERO_ON_TAKE_MAX_PAGE}. A
     * small cache's pages turn over every few inserts (a 4 KiB page holds ~14 records of 256
     * bytes), and the pool hands back the page freed last, whose lines the evictor's zeroing had
     * just left in its own core's cache: the writer's record stores then fetched them from
     * there one by one, each waited for by the writer's next locked instruction. Zeroed by the
     * writer, they come in one burst of stores into its own cache. Two threads' inserts at 10K
     * entries 0.952 [0.855, 0.970] of the time, one thread's 0.940 and 0.954 (not resolved); no
     * difference at 100K and 1M, whose larger pages are out of the evictor's caches by then
     * and whose fill would be a longer stall for one insert (docs/speed-work.md, fifty-fourth
     * session).
     */
    private final boolean zeroOnTake;

    private final int pageShift;
    private final int maxPages;
    private final int stripes;
    private final int writerReserve;
    private final MemoryBudget budget;

    private final MemorySegment[] pages;
    private final MemorySegment[] readOnlyPages;
    private final NativeMemory.Block[] blocks;
    /**
     * How many times each page was reused (recycled or freed): a reference to a record taken
     * with the page's generation is stale once the generation moved on.
     */
    private final int[] generation;
    /**
     * Where a page's records end once sealed; -1 while a stripe still appends to it. Written
     * under this store's monitor with release, read by the evictor's cursors with acquire and no
     * monitor: a page in the log is sealed once, and only its evictor recycles it (the monitor
     * there was a line two writers' page rolls also take: two threads' inserts at 10K ~6% faster).
     */
    private final long[] sealedTop;
    /** The stripe that appends to an active page (written as {@link #sealedTop} is). */
    private final int[] pageStripe;
    /**
     * The queue a page belongs to (set before the page is published to its stripe, and when a
     * page of main moves whole to the other queue of main, {@link #moveOldest}).
     */
    private final byte[] pageQueue;
    /**
     * Per page, so that a page can change queue with its records ({@link #moveOldest}): its queue
     * and the records that left it without the evictor (removed or replaced by writers, or
     * abandoned before they were installed: {@link #recordLeft}, {@link #recordAbandoned}), in
     * one word, so that a writer counts a record out of the queue the page is in at that moment.
     */
    private final long[] pageState;
    /**
     * Per page: the records counted onto it (those the evictor wrote, on a page of main; see
     * {@link #placedCounted}) less those the evictor took off (evictor only).
     */
    private final int[] evictorLive;
    /**
     * Whether {@link #evictorLive} counts the records placed on the page: from the start on a page
     * of main (only the evictor writes there, and counts each); from its first move whole on a
     * page of the window, whose writers count nothing (the move counts the records it walked).
     */
    private final boolean[] placedCounted;

    private final long[] cursors;
    private final Object[] stripeLocks;

    /**
     * The earliest deadline of any record in a page, {@link Long#MAX_VALUE} for none: lowered
     * by writers with a CAS, reset by the evictor after it has removed a page's expired records.
     */
    private final long[] minDeadline;
    /** Whether a page is in the FIFO (guarded by this). */
    private final boolean[] inLog;
    /** Pages by the earliest deadline of their records (guarded by this). */
    private final PageExpiryQueue expiring = new PageExpiryQueue();
    /**
     * Set, for good, when the first deadline is noted: until then the evictor's routine skips
     * expiry without reading the ticker or taking this store's monitor.
     */
    private volatile boolean deadlinesNoted;
    /** The record shapes the cache learned: parsing any record of this store needs them. */
    private final RecordShapes shapes = new RecordShapes();

    // Guarded by this: per stripe, the FIFO of its pages in activation order; free pages, ids.
    private final int[][] fifo;
    private final int[] fifoHead;
    private final int[] fifoSize;
    /**
     * One bit per stripe, set while its FIFO holds a page (written under this, read without):
     * the evictor takes the window's FIFOs in turn through it, and on a machine of many cores
     * most of them are empty (stripes go by cores, not by the threads that write).
     */
    private final long[] queued;

    private final int[] freePages;
    private int freeCount;
    private final int[] unusedIds;
    private int unusedCount;
    private int allocatedPages;
    /** Pages freed to give their budget back ({@link #releaseFreePages}), ever. */
    private long pagesReleased;

    private boolean closed;
    private final boolean adviseHugePages;
    /** Where pages smaller than a huge page come from when huge pages are advised; else null. */
    private final PageSlabs slabs;

    /** A store whose pages are ordinary blocks (see the other constructor). */
    public PageStore(int pageSize, long maxRecordBytes, int stripes, MemoryBudget budget) {
        this(pageSize, maxRecordBytes, stripes, budget, false);
    }

    /**
     * @param stripes writer stripes (all in the window); three more, the last, belong to the
     *     evictor: one in each queue
     * @param adviseHugePages whether pages are backed by advised huge pages: pages of whole huge
     *     pages are mapped and advised ({@link NativeMemory#allocate(long, boolean)}); smaller ones
     *     are carved from advised slabs ({@link PageSlabs}) if the log is large enough
     */
    public PageStore(int pageSize, long maxRecordBytes, int stripes, MemoryBudget budget, boolean adviseHugePages) {
        this.adviseHugePages = adviseHugePages;
        if (Integer.bitCount(pageSize) != 1) {
            throw new IllegalArgumentException("pageSize must be a power of two, was " + pageSize);
        }
        this.pageSize = pageSize;
        this.zeroOnTake = pageSize <= ZERO_ON_TAKE_MAX_PAGE;
        this.pageShift = Integer.numberOfTrailingZeros(pageSize);
        this.maxPages = (int) Math.max(2, Math.min(maxRecordBytes / pageSize + 1, (1L << 40) / pageSize));
        this.stripes = stripes + QUEUES;
        this.writerReserve = 1;
        this.budget = budget;
        this.pages = new MemorySegment[maxPages];
        this.readOnlyPages = new MemorySegment[maxPages];
        this.blocks = new NativeMemory.Block[maxPages];
        this.sealedTop = new long[maxPages];
        this.generation = new int[maxPages];
        this.pageStripe = new int[maxPages];
        this.pageQueue = new byte[maxPages];
        this.pageState = new long[maxPages];
        this.evictorLive = new int[maxPages];
        this.placedCounted = new boolean[maxPages];
        this.cursors = new long[(this.stripes + 1) * STRIDE];
        this.stripeLocks = new Object[this.stripes];
        for (int s = 0; s < this.stripes; s++) {
            cursors[(s + 1) * STRIDE] = NO_PAGE;
            stripeLocks[s] = new Object();
        }
        this.minDeadline = new long[maxPages];
        this.inLog = new boolean[maxPages];
        this.fifo = new int[this.stripes][maxPages];
        this.fifoHead = new int[this.stripes];
        this.fifoSize = new int[this.stripes];
        this.queued = new long[(this.stripes + 63) >>> 6];
        this.freePages = new int[maxPages];
        this.unusedIds = new int[maxPages];
        for (int id = maxPages - 1; id >= 0; id--) {
            unusedIds[unusedCount++] = id; // taken lowest first (slabs fill one after another)
        }
        this.slabs =
                adviseHugePages && PageSlabs.worthIt(pageSize, maxPages) ? new PageSlabs(pageSize, maxPages) : null;
    }

    public int pageSize() {
        return pageSize;
    }

    public int writerStripes() {
        return stripes - QUEUES;
    }

    /** The evictor's stripe in {@code queue}. */
    public int evictorStripe(int queue) {
        return stripes - QUEUES + queue;
    }

    /** The queue the pages of {@code stripe} belong to. */
    public int queueOfStripe(int stripe) {
        return stripe < stripes - QUEUES ? WINDOW : stripe - (stripes - QUEUES);
    }

    /** The queue of the page holding {@code location}. */
    public int queueOf(long location) {
        return pageQueue[(int) (location >>> pageShift)];
    }

    public MemorySegment page(long location) {
        return pages[(int) (location >>> pageShift)];
    }

    public MemorySegment readOnlyPage(long location) {
        return readOnlyPages[(int) (location >>> pageShift)];
    }

    /** The page that holds {@code location}. */
    public int pageOf(long location) {
        return (int) (location >>> pageShift);
    }

    public RecordShapes shapes() {
        return shapes;
    }

    /** The page's generation (see {@link #generation}); racy reads see a recent value. */
    public int generation(int page) {
        return generation[page];
    }

    public long offset(long location) {
        return location & (pageSize - 1);
    }

    public long location(int page, long offset) {
        return ((long) page << pageShift) | offset;
    }

    public MemorySegment pageById(int page) {
        return pages[page];
    }

    // ---------------------------------------------------------------------------------------
    // Appending

    /**
     * Reserves room for one record on {@code stripe} and returns its location, or {@link
     * #NO_PAGE} when no page is free (the caller evicts and retries). The record must fit in a
     * page.
     */
    public long reserve(int stripe, int format, int keyLength, int valueLength, boolean expires, boolean large) {
        return reserve(stripe, format, keyLength, valueLength, expires, large, true);
    }

    /**
     * Reserves room for one record on the page {@code stripe} appends to now, or on a page taken
     * from the free pool when that one is full; returns {@link #NO_PAGE} when neither has room
     * (no page yet, or none free). Never allocates a page or waits for one: for a writer that
     * holds a shard's lock, which must not wait for eviction or a system call. Rolling here
     * spares an insert into a cache of small pages a second lock and look on the append path
     * every page's worth of records (docs/speed-work.md, thirty-first session).
     */
    public long reserveOnPage(int stripe, int format, int keyLength, int valueLength, boolean expires, boolean large) {
        return reserve(stripe, format, keyLength, valueLength, expires, large, false);
    }

    private long reserve(
            int stripe,
            int format,
            int keyLength,
            int valueLength,
            boolean expires,
            boolean large,
            boolean mayAllocate) {
        int index = (stripe + 1) * STRIDE;
        for (; ; ) {
            long c = (long) CURSOR.getVolatile(cursors, index);
            long location = reserveAt(index, c, format, keyLength, valueLength, expires, large);
            if (location >= 0) {
                return location;
            }
            if (location == FULL && !roll(stripe, c, mayAllocate)) {
                return NO_PAGE;
            }
        }
    }

    /** {@link #reserveAt}'s answers besides a location. */
    private static final long FULL = -2L;

    private static final long RACED = -3L;

    /**
     * The record's location on the cursor {@code c} of the stripe at {@code index}, or {@link
     * #FULL} (no page, or no room on it), or {@link #RACED} (the cursor moved: read it again).
     */
    private long reserveAt(
            int index, long c, int format, int keyLength, int valueLength, boolean expires, boolean large) {
        if (c == NO_PAGE) {
            return FULL;
        }
        int top = (int) c;
        int size = RecordLayout.recordSize(top, format, keyLength, valueLength, expires, large);
        if (top + size > pageSize) {
            return FULL;
        }
        return CURSOR.compareAndSet(cursors, index, c, c + size) ? location((int) (c >>> 32), top) : RACED;
    }

    /**
     * Seals the stripe's page (if the cursor is still {@code seen}) and takes a fresh one: from the
     * free pool, or (if {@code mayAllocate}) newly allocated within the budget. Returns false if
     * there is none; then the page is left active unless it could be replaced. Sealing is a CAS
     * on the cursor, so a reservation that raced with it is either inside the sealed top or
     * retried on the fresh page, never lost.
     */
    private boolean roll(int stripe, long seen, boolean mayAllocate) {
        int index = (stripe + 1) * STRIDE;
        boolean evictor = stripe >= stripes - QUEUES;
        synchronized (stripeLocks[stripe]) {
            long c = (long) CURSOR.getVolatile(cursors, index);
            if (c != seen) {
                return true; // the cursor moved; retry the reservation
            }
            int fresh;
            // One hold of the store's monitor for the seal, the fresh page and its place in the
            // FIFO: a page of a small cache holds ~13 records, and each monitor taken costs a
            // roll two atomics (docs/speed-work.md, thirty-first session).
            synchronized (this) {
                if (!mayAllocate && freeCount <= (evictor ? 0 : writerReserve)) {
                    return false; // the page stays active: the caller appends elsewhere, or waits
                }
                if (c != NO_PAGE) {
                    if (!CURSOR.compareAndSet(cursors, index, c, NO_PAGE)) {
                        return true;
                    }
                    seal((int) (c >>> 32), (int) c);
                }
                fresh = takeFreePage(evictor);
                if (fresh < 0) {
                    return false;
                }
                SEALED_TOP.setRelease(sealedTop, fresh, -1L);
                PAGE_STRIPE.setRelease(pageStripe, fresh, stripe);
                pageQueue[fresh] = (byte) queueOfStripe(stripe);
                PAGE_STATE.setVolatile(pageState, fresh, (long) queueOfStripe(stripe) << STATE_QUEUE_SHIFT);
                evictorLive[fresh] = 0;
                placedCounted[fresh] = queueOfStripe(stripe) != WINDOW;
                minDeadline[fresh] = Long.MAX_VALUE;
                enqueue(fresh);
            }
            CURSOR.setVolatile(cursors, index, (long) fresh << 32);
            return true;
        }
    }

    /** Publishes where a sealed page's records end; the caller holds the store's monitor. */
    private void seal(int page, long top) {
        SEALED_TOP.setRelease(sealedTop, page, top);
    }

    /**
     * Notes that a record with {@code deadline} was written at {@code location}; if it is the
     * page's earliest, the page is queued to be looked at when it passes.
     */
    public void noteDeadline(long location, long deadline) {
        int page = (int) (location >>> pageShift);
        for (; ; ) {
            long current = (long) DEADLINE.getVolatile(minDeadline, page);
            if (current != Long.MAX_VALUE && deadline - current >= 0) {
                return;
            }
            if (DEADLINE.compareAndSet(minDeadline, page, current, deadline)) {
                if (!deadlinesNoted) {
                    deadlinesNoted = true;
                }
                synchronized (this) {
                    expiring.add(deadline, page);
                }
                return;
            }
        }
    }

    /**
     * A page in the log whose earliest deadline has passed at {@code now}, or -1. Queue entries
     * made stale by a later reset are skipped.
     */
    public synchronized int pollExpiringPage(long now) {
        while (!expiring.isEmpty() && expiring.peekDeadline() - now < 0) {
            int page = expiring.poll();
            long current = (long) DEADLINE.getVolatile(minDeadline, page);
            if (inLog[page] && current != Long.MAX_VALUE && current - now < 0) {
                return page;
            }
        }
        return -1;
    }

    /** Whether any record with a deadline was ever written: only then can a page expire. */
    public boolean anyDeadlineNoted() {
        return deadlinesNoted;
    }

    /** The page's earliest deadline as noted so far. */
    public long minDeadline(int page) {
        return (long) DEADLINE.getVolatile(minDeadline, page);
    }

    /**
     * After the evictor removed a page's expired records: sets its earliest deadline to that of
     * the records left, unless a writer lowered it since {@code seen} (then the writer queued it).
     */
    public void resetMinDeadline(int page, long seen, long remaining) {
        if (DEADLINE.compareAndSet(minDeadline, page, seen, remaining) && remaining != Long.MAX_VALUE) {
            synchronized (this) {
                expiring.add(remaining, page);
            }
        }
    }

    /** Queues a page to be looked at again after {@code deadline}. */
    public synchronized void requeueExpiring(int page, long deadline) {
        expiring.add(deadline, page);
    }

    /** Where a sealed page's records end. */
    public synchronized long sealedTop(int page) {
        return sealedTop[page];
    }

    /**
     * Seals the active page {@code page} so the evictor can retire it; its stripe takes a new
     * page on its next append.
     */
    public void sealActive(int page) {
        int stripe;
        synchronized (this) {
            if (sealedTop[page] >= 0) {
                return;
            }
            stripe = pageStripe[page];
        }
        int index = (stripe + 1) * STRIDE;
        synchronized (stripeLocks[stripe]) {
            for (; ; ) {
                long c = (long) CURSOR.getVolatile(cursors, index);
                if (c == NO_PAGE || (int) (c >>> 32) != page) {
                    return;
                }
                if (CURSOR.compareAndSet(cursors, index, c, NO_PAGE)) {
                    synchronized (this) {
                        seal(page, (int) c);
                    }
                    return;
                }
            }
        }
    }

    /**
     * Where the records of {@code page} end for now: its sealed top, or the live cursor of the
     * stripe appending to it, or -1 while it is between the two (being sealed).
     */
    public long limit(int page) {
        long sealed = (long) SEALED_TOP.getAcquire(sealedTop, page);
        if (sealed >= 0) {
            return sealed;
        }
        int stripe = (int) PAGE_STRIPE.getAcquire(pageStripe, page);
        long c = (long) CURSOR.getVolatile(cursors, (stripe + 1) * STRIDE);
        if (c != NO_PAGE && (int) (c >>> 32) == page) {
            return (int) c;
        }
        // The cursor left the page: sealed, or being sealed (-1 until seal() has run).
        return (long) SEALED_TOP.getAcquire(sealedTop, page);
    }

    /** Whether one of the evictor's stripes appends to {@code page}. */
    public boolean isEvictorPage(int page) {
        return (int) PAGE_STRIPE.getAcquire(pageStripe, page) >= stripes - QUEUES;
    }

    public boolean isSealed(int page) {
        return (long) SEALED_TOP.getAcquire(sealedTop, page) >= 0;
    }

    // ---------------------------------------------------------------------------------------
    // The FIFO and the free pool (evictor side)

    /** Puts {@code page} at the young end of its stripe's FIFO; the caller holds the store's monitor. */
    private void enqueue(int page) {
        int f = pageStripe[page];
        int at = fifoHead[f] + fifoSize[f];
        fifo[f][at >= maxPages ? at - maxPages : at] = page;
        FIFO_SIZE.setRelease(fifoSize, f, fifoSize[f] + 1); // the slot is written before the size grows
        if (fifoSize[f] == 1) {
            QUEUED.setRelease(queued, f >>> 6, queued[f >>> 6] | 1L << f);
        }
        inLog[page] = true;
    }

    /** Stripes, writers' and the evictor's: each has its own FIFO of pages. */
    public int stripes() {
        return stripes;
    }

    /**
     * The oldest page of {@code stripe}, or -1 when it has none. Without the lock: only the
     * evictor moves a FIFO's head (and it is the caller), and writers append behind it, publishing
     * the page before the size; the evictor asks this for every empty FIFO on every eviction.
     */
    public int oldestPage(int stripe) {
        return pagesQueued(stripe) == 0 ? -1 : fifo[stripe][fifoHead[stripe]];
    }

    /** Pages in the FIFO of {@code stripe} now, without the lock (for tests and diagnostics). */
    public int pagesQueued(int stripe) {
        return (int) FIFO_SIZE.getAcquire(fifoSize, stripe);
    }

    /** Removes the oldest page of {@code stripe} from its FIFO; the caller retires it. */
    public synchronized void dequeueOldest(int stripe) {
        inLog[fifo[stripe][fifoHead[stripe]]] = false;
        int next = fifoHead[stripe] + 1;
        fifoHead[stripe] = next == maxPages ? 0 : next;
        FIFO_SIZE.setRelease(fifoSize, stripe, fifoSize[stripe] - 1);
        if (fifoSize[stripe] == 0) {
            QUEUED.setRelease(queued, stripe >>> 6, queued[stripe >>> 6] & ~(1L << stripe));
        }
    }

    /**
     * The first stripe from {@code from} (inclusive) to {@code to} (exclusive) whose FIFO holds a
     * page, or -1: one word read per 64 stripes. Without the lock, like {@link #oldestPage}: a
     * page enqueued meanwhile may be missed, to be found on the next call.
     */
    public int nextQueued(int from, int to) {
        for (int w = from >>> 6; w << 6 < to; w++) {
            long bits = (long) QUEUED.getAcquire(queued, w);
            if (w == from >>> 6) {
                bits &= -1L << from; // the shift takes from modulo 64
            }
            if (bits != 0) {
                int stripe = (w << 6) + Long.numberOfTrailingZeros(bits);
                return stripe < to ? stripe : -1;
            }
        }
        return -1;
    }

    /**
     * Moves the oldest page of {@code from}'s FIFO, {@code page}, a sealed page, to the young end of
     * {@code to}'s (an evictor stripe), records and all: its locations do not change, so no index
     * word and no reader notices; only the queue it counts in does. A page of main moves within
     * main; a page of the window to main, or to the window's young end. {@code recordsOnPage} is
     * how many records the page holds in all (the caller walked them): a page of the window
     * learns it so, as its writers count nothing. {@code tookByCursor} records the evictor took
     * off it are counted on the evictor's cursor, not here ({@link #liveRecords}); they join the
     * page's own count now. Returns how many live records it held when it changed queue: those
     * a writer removes or replaces from then on are counted out of the new queue ({@link
     * #recordLeft}), those before out of the old one.
     */
    public synchronized long moveOldest(int from, int to, int page, int recordsOnPage, int tookByCursor) {
        if (fifoSize[from] == 0 || fifo[from][fifoHead[from]] != page || sealedTop[page] < 0) {
            throw new IllegalStateException("page " + page + " is not the sealed oldest page of stripe " + from);
        }
        int queue = queueOfStripe(to);
        if (to < stripes - QUEUES || (queue == WINDOW && queueOfStripe(from) != WINDOW)) {
            throw new IllegalArgumentException(
                    "pages move whole to an evictor stripe, and only the window's to the window: stripes " + from
                            + " to " + to);
        }
        if (!placedCounted[page]) {
            evictorLive[page] += recordsOnPage;
            placedCounted[page] = true;
        }
        evictorLive[page] -= tookByCursor;
        dequeueOldest(from);
        PAGE_STRIPE.setRelease(pageStripe, page, to);
        pageQueue[page] = (byte) queue;
        long left;
        for (; ; ) {
            long state = (long) PAGE_STATE.getVolatile(pageState, page);
            left = state & STATE_LEFT_MASK;
            if (PAGE_STATE.compareAndSet(pageState, page, state, (long) queue << STATE_QUEUE_SHIFT | left)) {
                break;
            }
        }
        enqueue(page);
        return evictorLive[page] - left;
    }

    /**
     * A writer removed or replaced the record at {@code location} (under its shard's lock): returns
     * the queue it leaves. The record is counted out of its page ({@link #moveOldest}), one
     * atomic addition that also reads the queue the page is in.
     */
    public int recordLeft(long location) {
        int page = (int) (location >>> pageShift);
        return (int) ((long) PAGE_STATE.getAndAdd(pageState, page, 1L) >>> STATE_QUEUE_SHIFT);
    }

    /**
     * A writer gives up the record it appended at {@code location} without installing it (its
     * condition failed, room must be made first, or writing it threw): counted out of its page as
     * one that left, before the record is marked decided, so that an evictor that sees it
     * decided sees the count too. It was never in a queue's count.
     */
    public void recordAbandoned(long location) {
        int page = (int) (location >>> pageShift);
        PAGE_STATE.getAndAdd(pageState, page, 1L);
    }

    /** The evictor wrote a record of main at {@code location}. */
    public void evictorWrote(long location) {
        evictorLive[(int) (location >>> pageShift)]++;
    }

    /** The evictor took the record at {@code location} out of its page (moved, evicted or expired it). */
    public void evictorTook(long location) {
        evictorLive[(int) (location >>> pageShift)]--;
    }

    /**
     * Live records on a page, as of now (writers may take more out at any time), given how many
     * records it holds in all, which only a page of the window that never moved needs, and how
     * many the evictor took off it that its cursor counted instead of the page.
     */
    public long liveRecords(int page, int recordsOnPage, int tookByCursor) {
        long placed = placedCounted[page] ? 0 : recordsOnPage;
        return placed
                + evictorLive[page]
                - tookByCursor
                - ((long) PAGE_STATE.getVolatile(pageState, page) & STATE_LEFT_MASK);
    }

    /** Pages in the log, every stripe's. */
    public synchronized int pagesInLog() {
        int n = 0;
        for (int size : fifoSize) {
            n += size;
        }
        return n;
    }

    /** Pages of {@code queue} in the log. */
    public synchronized int pagesInLog(int queue) {
        int n = 0;
        for (int f = 0; f < stripes; f++) {
            n += queueOfStripe(f) == queue ? fifoSize[f] : 0;
        }
        return n;
    }

    /** A page of the free pool, or one allocated within the budget, or -1; the caller holds the store's monitor. */
    private int takeFreePage(boolean evictor) {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
        if (freeCount > (evictor ? 0 : writerReserve)) {
            int id = freePages[--freeCount];
            if (zeroOnTake) {
                pages[id].fill((byte) 0); // see zeroOnTake
            }
            return id;
        }
        if (unusedCount > 0 && budget.tryReserve(pageSize)) {
            int id = unusedIds[--unusedCount];
            MemorySegment page;
            try {
                if (slabs != null) {
                    page = slabs.take(id);
                } else {
                    blocks[id] = NativeMemory.allocate(pageSize, adviseHugePages);
                    page = blocks[id].segment();
                }
            } catch (RuntimeException | OutOfMemoryError e) {
                unusedIds[unusedCount++] = id;
                budget.release(pageSize);
                throw e;
            }
            pages[id] = page;
            readOnlyPages[id] = page.asReadOnly();
            allocatedPages++;
            return id;
        }
        return -1;
    }

    /**
     * Returns a retired page to the free pool, zeroed now or when it is taken ({@link
     * #zeroOnTake}). The caller has waited out the reader grace period since it was dequeued.
     */
    public void recycle(int page) {
        generation[page]++;
        if (!zeroOnTake) {
            pages[page].fill((byte) 0); // a zero layout byte means "reserved, not yet written"
        }
        synchronized (this) {
            freePages[freeCount++] = page;
        }
    }

    /**
     * Whether writers could take fewer than {@code n} pages without eviction, read without the
     * lock: an approximation for deciding when to schedule maintenance, on every write.
     */
    public boolean lowOnPages(int n) {
        long allocatable = Math.min(unusedCount, budget.available() / pageSize);
        return freeCount - writerReserve + allocatable < n;
    }

    /** Whether a writer could take a page now without eviction. */
    public boolean writerCanTakePage() {
        return writerCanTakePages(1);
    }

    /** Whether writers could take {@code n} pages now without eviction. */
    public synchronized boolean writerCanTakePages(int n) {
        long allocatable = Math.min(unusedCount, budget.available() / pageSize);
        return freeCount - writerReserve + allocatable >= n;
    }

    /** Pages the budget can hold at most. */
    public int maxPages() {
        return maxPages;
    }

    public synchronized int freePageCount() {
        return freeCount;
    }

    /**
     * Frees pooled pages until {@code bytes} of budget are available or the pool is empty.
     * Returns whether the budget now has {@code bytes} available.
     */
    public boolean releaseFreePages(long bytes) {
        for (; ; ) {
            NativeMemory.Block block;
            synchronized (this) {
                if (budget.available() >= bytes) {
                    return true;
                }
                if (freeCount == 0) {
                    return false;
                }
                int id = freePages[--freeCount];
                block = blocks[id];
                blocks[id] = null;
                // The freed segment stays referenced: a racing optimistic reader meets a closed
                // segment, which throws, never a null (or, in a slab still mapped, zeros).
                generation[id]++;
                if (slabs != null) {
                    slabs.release(id, pages[id]); // before the id can be taken again
                }
                unusedIds[unusedCount++] = id;
                allocatedPages--;
                pagesReleased++;
            }
            if (block != null) {
                block.free();
            }
            budget.release(pageSize);
        }
    }

    public synchronized long allocatedBytes() {
        return (long) allocatedPages * pageSize;
    }

    /** Frees every page; the cache is closing and no reader or writer is left. */
    public synchronized void freeAll() {
        closed = true;
        for (int id = 0; id < maxPages; id++) {
            if (blocks[id] != null) {
                blocks[id].free(); // the segments stay referenced: late accesses throw, never crash
                blocks[id] = null;
            }
        }
        if (slabs != null) {
            slabs.freeAll();
        }
        budget.release((long) allocatedPages * pageSize);
        allocatedPages = 0;
    }

    /** Pages freed so far to give their budget back (for tests). */
    public synchronized long pagesReleased() {
        return pagesReleased;
    }

    /** Whether pages are carved from huge-page slabs (see {@link PageSlabs}). */
    public boolean carvesSlabs() {
        return slabs != null;
    }

    /** Slabs mapped now, 0 if pages are not carved from slabs (for tests). */
    public synchronized int mappedSlabs() {
        return slabs != null ? slabs.mappedSlabs() : 0;
    }

    // ---------------------------------------------------------------------------------------
    // Reading records

    /**
     * Whether the record at {@code location} has exactly the key bytes {@code key[0, keyLength)};
     * its header is parsed into {@code h} either way, for the caller to use on a match.
     */
    public boolean keyEquals(long location, byte[] key, int keyLength, RecordLayout.Header h) {
        MemorySegment page = pages[(int) (location >>> pageShift)];
        long offset = location & (pageSize - 1);
        h.parse(page, offset, pageSize, shapes);
        return h.keyLength == keyLength && RecordLayout.bytesEqual(page, h.keyOffset, key, keyLength);
    }

    /** The hash of the key in the record at {@code location}; its header is parsed into {@code h}. */
    public long hashOfKeyAt(long seed, long location, RecordLayout.Header h) {
        MemorySegment page = pages[(int) (location >>> pageShift)];
        long offset = location & (pageSize - 1);
        h.parse(page, offset, pageSize, shapes);
        return KeyHash.hash(seed, page, h.keyOffset, h.keyLength);
    }
}
