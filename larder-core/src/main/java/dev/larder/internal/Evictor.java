package dev.larder.internal;

import dev.larder.RemovalCause;
import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import dev.larder.internal.policy.WindowTinyLfu;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Reclaims memory and entry slots with Larder's W-TinyLFU policy, played out on the log's three
 * queues (see {@link PageStore}): every new record enters the <em>window</em>; when the window
 * holds more entries than its target (about 1% of the cache, adapted by hill climbing), its
 * oldest record becomes the <em>candidate</em> and meets the <em>victim</em>, the oldest record
 * of main's <em>probation</em> queue (of its <em>protected</em> queue when probation is empty).
 * The one the frequency sketch has seen more often stays (the candidate is copied to the head
 * of probation), the other is evicted; ties keep the victim, which is what protects the cache
 * from scans and loops.
 *
 * <p>Second chances, CLOCK-style: a window record read since it was last looked at is copied
 * to the window's head with its access count cleared, so the window behaves like an LRU. A main
 * record read since it was last looked at is copied to the head of the protected queue with its
 * count lowered by one (from probation, its promotion), instead of being a victim; protected
 * holds at most {@link WindowTinyLfu#protectedTarget 80%} of main, and gives up its oldest
 * unread records to probation's head. Main thereby behaves like Caffeine's segmented LRU.
 *
 * <p>Other duties: a record no index word leads to is dead and skipped; one past its deadline
 * is removed as EXPIRED; when live records fill little of the log, records are copied forward
 * rather than evicted (compaction), so overwrites do not cost entries. Once a cursor passes
 * the end of a sealed page, the page is retired, then zeroed and reused after a reader grace
 * period.
 *
 * <p>Bounded work: between two evictions the window and main each give at most {@link
 * #MAX_REINSERTIONS} second chances, and each promotion into protected demotes at most {@link
 * #DEMOTIONS_PER_PROMOTION} records, so one eviction copies no more than {@link #MAX_EXAMINED}
 * live records, whatever the access pattern; besides, it may move up to {@link #MAX_PAGE_MOVES}
 * pages of main whole whose records all earned the same move ({@link #movePageWhole}).
 *
 * <p>Runs under the cache's maintenance lock, one thread at a time. It holds one shard lock at
 * a time, never waits while holding it, and runs no user code: removals are collected and
 * delivered to the listener after the maintenance lock is released.
 */
final class Evictor {
    enum Goal {
        /** A free page for writers. */
        PAGE,
        /** A number of bytes of budget free (for index growth). */
        BYTES,
        /**
         * An extent for a large value of a size class's bytes: a kept extent of that class, or
         * that many bytes of budget free.
         */
        EXTENT,
        /** Room for one more entry under maximumEntries. */
        ENTRY
    }

    /** One removal to report to the listener. */
    record Removal(Object key, Object value, RemovalCause cause) {}

    static final int MAX_STEPS = 1 << 20;
    /** Second chances each queue may give between two evictions. */
    static final int MAX_REINSERTIONS = 16;
    /** Records the protected queue may give up to probation after each promotion into it. */
    static final int DEMOTIONS_PER_PROMOTION = 2;
    /**
     * Live records one eviction moves at most: the window's second chances, main's (each
     * promotion into protected followed by its demotions), and the candidate and victim.
     */
    static final int MAX_EXAMINED = MAX_REINSERTIONS + MAX_REINSERTIONS * (1 + DEMOTIONS_PER_PROMOTION) + 2;
    /** How long eviction waits for a writer that reserved the oldest record to install it. */
    static final long WAIT_LIMIT_NANOS = 10_000_000_000L;

    private final NativeCache<?, ?> cache;
    private final PageStore store;
    private final WindowTinyLfu policy;
    /** One cursor per FIFO of the window (each writer stripe's and the evictor's window stripe). */
    private final LogCursor[] windows;
    /** The window cursor whose record is the current candidate (set by findCandidate). */
    private LogCursor window;
    /** The window FIFO to look at first next time: they take turns. */
    private int nextWindow;

    /** Main's probation queue: records admitted and not read since; victims come from here. */
    private final LogCursor probation;
    /** Main's protected queue: records read while on probation. */
    private final LogCursor protect;
    /** The main cursor whose record is the current victim (set by findVictim). */
    private LogCursor victim;
    /** Bytes the current makeRoom call may still copy forward for compaction. */
    private long compactionAllowance;

    /** Main records still to move to the window since the hill climber raised its target. */
    private long transferQuota;

    private int windowReinsertions;
    private int mainReinsertions;
    /** Live records moved since the last eviction, and the most one eviction needed. */
    private int examined;

    private int maxExamined;

    /**
     * A victim that beats this many candidates in a row (at least; see {@link #maxDefenses}) without
     * being read goes to the head of its queue, still cached, and the next record faces the
     * candidates. Without it a key hot long ago, its sketch count high and its record unread,
     * rejected every newcomer until aging halved its count: on sprite at 400 entries one victim
     * beat 3,400 candidates in a row while the workload had moved on (Caffeine has the same
     * freeze; its hit rate there was a point above Larder's, now it is level).
     */
    static final int MIN_DEFENSES = 16;
    /** The victim whose defenses are counted (its location), and how many it has won in a row. */
    private long defender = -1;

    private int defenses;
    /** Victims moved to their queue's head after winning {@link #maxDefenses} duels in a row. */
    private long rotations;

    /**
     * Entries removed and not yet subtracted from the cache's count: one atomic subtraction per
     * {@link #UNCOUNTED_MAX} removals instead of one each. Two writers inserting spent a fifth of
     * their time on that count's cache line, a writer waiting for a slot reading it while the
     * evictor wrote it.
     */
    private int uncounted;

    /**
     * Removals after which the evictor subtracts them from the count (waiting writers see them),
     * never more than an eviction batch: a small cache (batch 1 below 1,024 entries) keeps
     * subtracting each one, as before.
     */
    static final int UNCOUNTED_MAX = 8;

    private final int uncountedMax;

    /**
     * Main's victim usually wins duel after duel against new records: its location, its key's
     * hash and its frequency estimate are kept from one duel to the next, so that only the
     * candidate is hashed and estimated. Forgotten whenever the sketch may have changed (a
     * drain, at the start of each makeRoom, the only place duels happen) and whenever pages are recycled (a location may then be
     * another record's).
     */
    private long memoVictim = -1;

    private long memoVictimHash;
    /** The victim's estimate, or -1 if not taken yet. */
    private int memoVictimFrequency = -1;

    private int[] retired = new int[8];
    private int retiredCount;
    private List<Removal> removals = new ArrayList<>();

    Evictor(NativeCache<?, ?> cache, WindowTinyLfu policy) {
        this.cache = cache;
        this.store = cache.store;
        this.policy = policy;
        this.windows = new LogCursor[store.evictorStripe(PageStore.WINDOW) + 1];
        for (int stripe = 0; stripe < windows.length; stripe++) {
            windows[stripe] = new LogCursor(store, stripe);
        }
        this.window = windows[0];
        this.probation = new LogCursor(store, store.evictorStripe(PageStore.PROBATION));
        this.protect = new LogCursor(store, store.evictorStripe(PageStore.PROTECTED));
        this.victim = probation;
        this.uncountedMax = Math.min(UNCOUNTED_MAX, entryBatch());
    }

    /**
     * Evicts until {@code goal} holds. Returns false if nothing more can be reclaimed. A writer
     * waiting for a page gets a batch of them freed, so the grace period and the lock hand-off
     * are paid once per batch, not once per page.
     */
    boolean makeRoom(Goal goal, long bytes) {
        forgetVictim(); // the caller drained the access buffers into the sketch
        if (pageMoves != 0) {
            pageMoves = 0; // per eviction, and per call: compaction may evict nothing for long
        }
        defenseLimit = maxDefenses();
        if (goal != Goal.ENTRY) {
            judgePadding(); // bytes are short: padding may have to stop (not per batch of inserts)
        }
        int batch = goal == Goal.PAGE ? pageBatch() : goal == Goal.ENTRY ? entryBatch() : 1;
        // Compaction frees pages, so it serves a writer waiting for a page; a large value or
        // the index needs budget, which only eviction of live entries gives back for sure.
        boolean compact = goal == Goal.PAGE && liveShare() < CacheSizing.COMPACT_BELOW;
        // Compaction must pay for itself: after copying four pages' worth of live records per
        // page wanted without meeting the goal, the oldest pages are mostly live (or the budget
        // is held by large values), and evicting is the way forward.
        compactionAllowance = 4L * batch * store.pageSize();
        if (goal == Goal.PAGE) {
            // Whole pages of dead records at the queues' oldest ends (overwrites, removals) are
            // the cheapest pages to free: nothing is copied and no entry is lost.
            dropDeadEverywhere(DEAD_DROP_BUDGET);
            if (hasRetired()) {
                reclaim();
            }
            if (met(goal, bytes, batch)) {
                return true;
            }
            // Next, extents kept for reuse hold budget that pages need (for bytes: see met).
            // Only what is short: freeing one closes its arena, a thread handshake.
            if (cache.large.pooledBytes() > 0) {
                cache.large.releasePooled((long) batch * store.pageSize());
                if (met(goal, bytes, batch)) {
                    return true;
                }
            }
        }
        long waitingSince = 0;
        int waits = 0;
        boolean check = true; // whether something happened that may have met the goal
        // For an entry slot: evictions still owed when the count was last read. The count is
        // read again only once they are done; another writer's CAS on it in between made each
        // read a cache miss.
        long owed = 0;
        int retiredThisCall = 0;
        for (int steps = 0; steps < MAX_STEPS; ) {
            if (check) {
                if (goal != Goal.ENTRY && hasRetired()) {
                    reclaim(); // retired pages and evicted large values count only once freed
                }
                if (met(goal, bytes, batch)) {
                    promoteExcess();
                    return true;
                }
                if (goal == Goal.ENTRY) {
                    owed = entries() - (cache.maximumEntries - batch);
                }
                check = false;
            }
            Step step = evictStep(compact && compactionAllowance > 0);
            switch (step) {
                case BUSY -> {
                    continue;
                }
                case WAITING -> {
                    // A writer is between reserving a record and installing it: spin briefly,
                    // then give it the CPU.
                    long now = System.nanoTime();
                    if (waitingSince == 0) {
                        waitingSince = now;
                        waits = 0;
                    } else if (now - waitingSince > WAIT_LIMIT_NANOS) {
                        return false;
                    }
                    if (++waits < 64) {
                        Thread.onSpinWait();
                    } else {
                        Thread.yield();
                    }
                    continue;
                }
                // An entry slot, or budget: an evicted large value's extent frees it for pages too.
                case EVICTED, DROPPED ->
                    check = goal == Goal.ENTRY
                            ? --owed <= 0 // a dead record DROPPED removes no entry: the count decides then
                            : goal != Goal.PAGE || cache.large.hasRetired();
                case PAGE_RETIRED -> {
                    check = true;
                    // Pages freed here may go straight to other writers: once a batch is freed,
                    // let the waiting writer try again rather than evict on.
                    if (goal == Goal.PAGE && ++retiredThisCall >= batch) {
                        reclaim();
                        if (met(goal, bytes, 1)) {
                            return true;
                        }
                    }
                }
                case NOTHING -> {
                    reclaim();
                    return met(goal, bytes, 1);
                }
                default -> {}
            }
            waitingSince = 0;
            steps++;
        }
        reclaim();
        return met(goal, bytes, 1);
    }

    /**
     * Once the evictions a writer needed are done, the window's records beyond its target move
     * to main unopposed, as a W-TinyLFU window's overflow does. The candidates of the duels
     * were the window's oldest records, so in the steady state nothing is left over; but a
     * window that grew past its target (while the cache filled, or when the target shrank)
     * would otherwise keep its excess forever, each candidate that loses being replaced by a
     * new record.
     */
    private void promoteExcess() {
        for (int steps = 256; steps > 0 && windowOverTarget(); steps--) {
            LogCursor.Next next = findCandidate(false);
            if (next == LogCursor.Next.RECORD) {
                if (promote() == Step.KEPT) {
                    break; // no room to move it
                }
            } else if (next == LogCursor.Next.PAGE_RETIRED) {
                retire(window.retiredPage);
            } else {
                break;
            }
        }
        examined = 0; // promotions are not evictions
    }

    private boolean hasRetired() {
        return retiredCount > 0 || cache.large.hasRetired() || cache.hasRetiredTables();
    }

    /**
     * Entry slots to free at once when maximumEntries binds: 1/512 of them, 1 to 32, so
     * inserts into a full cache take the maintenance lock once per batch, not once each. The
     * cache then holds up to that many fewer entries than its bound (0.2% at most).
     */
    private int entryBatch() {
        return entryBatch(cache.maximumEntries);
    }

    static int entryBatch(long maximumEntries) {
        return (int) Math.max(1, Math.min(32, maximumEntries / 512));
    }

    /**
     * Entries an insert may take the count past {@code maximumEntries} when another thread holds
     * the maintenance lock (and is evicting): 1/512 of the bound, at most 4,096, none below 4,096
     * entries. A second writer then does not wait behind the first one's eviction batch.
     */
    static long entrySlack(long maximumEntries) {
        return maximumEntries == Long.MAX_VALUE || maximumEntries < 4096 ? 0 : Math.min(4096, maximumEntries >>> 9);
    }

    /**
     * Pages to free at once for a waiting writer, and to keep free (the low watermark): 1/64 of
     * the pages the budget could hold besides the large values' extents, 1 to 16. Large values
     * take most of the budget of a cache of them, whose log is a few pages of their ids, and
     * keeping 16 pages free there evicted values and freed kept extents over and over for budget
     * the next values took back (two threads' 16 KiB inserts: docs/speed-work.md, twenty-fourth
     * session). Not 1/64 of the pages made: a cache with bytes to spare whose values change
     * length then kept too few pages free and evicted a few entries in 8% of runs.
     */
    private int pageBatch() {
        long logPages = store.maxPages() - cache.large.heldBytes() / store.pageSize();
        return (int) Math.max(1, Math.min(16, logPages / 64));
    }

    /**
     * @param n pages wanted (PAGE), or entry slots wanted (ENTRY)
     */
    private boolean met(Goal goal, long bytes, int n) {
        return switch (goal) {
            case PAGE -> store.writerCanTakePages(n);
            case BYTES -> {
                cache.large.releasePooled(bytes); // reclaimed extents may have been kept since
                yield store.releaseFreePages(bytes);
            }
            case EXTENT -> {
                // A reclaimed extent of the class may have been kept since: the writer takes it
                // (freeing it, for budget to make another just like it, cost a handshake).
                if (cache.large.hasPooled(bytes)) {
                    yield true;
                }
                cache.large.releasePooled(bytes);
                yield store.releaseFreePages(bytes);
            }
            case ENTRY -> entries() <= cache.maximumEntries - n;
        };
    }

    /**
     * The maintenance pass (on the cache's executor, when writes brought memory to the low
     * watermark, and every 64 writes of a thread): drop the expired and dead records at the
     * oldest end of the queues, move the window's overflow to main while the cache has room for
     * it, apply the hill climber's window changes, evict down to the low watermark, and free
     * what waits for a grace period.
     */
    void routine(boolean freePages) {
        judgePadding();
        expirePages(4);
        dropDeadEverywhere(256);
        if (!full()) {
            promoteExcess();
        }
        // A window below its target (the hill climber raised it) takes main's oldest records,
        // so the new split shows in the hit rate at once and the climber can judge it.
        for (int steps = 256; steps > 0 && transferQuota > 0 && windowUnderTarget(); steps--) {
            transferQuota--;
            LogCursor.Next next = findVictim(false);
            if (next == LogCursor.Next.RECORD) {
                if (act(victim, hashOf(victim), Action.MOVE_IF_ROOM, PageStore.WINDOW, victim.access()) == Step.KEPT) {
                    break; // no room to move it
                }
            } else if (next == LogCursor.Next.PAGE_RETIRED) {
                retire(victim.retiredPage);
            } else {
                break;
            }
        }
        demoteExcess(256);
        examined = 0; // promotions and transfers are not evictions
        // Up to the low watermark, so writers rarely wait for a page: a batch free, when a writer
        // that took a page found fewer left. (Not on every pass: large values take the budget
        // too, and a pass that evicted to keep pages free while writers allocate values would
        // hand them the budget and evict again. The entry bound is left to writers: evicting
        // ahead of it would keep the cache below it.)
        if (freePages && !store.writerCanTakePages(lowWatermarkPages())) {
            makeRoom(Goal.PAGE, 0);
        }
        evictPastTheBound();
        reclaim();
    }

    /**
     * Inserts that went past maximumEntries into the slack (see {@link #entrySlack}) are evicted,
     * unless the partition can borrow the slots instead ({@code NativeCache.borrowedRoom}).
     */
    void evictPastTheBound() {
        if (entries() > cache.maximumEntries && !cache.borrowedRoom()) {
            makeRoom(Goal.ENTRY, 0);
        }
    }

    /** Entries below the bound at which the executor's thread, lingering, starts the next batch: half a batch. */
    int aheadMargin() {
        return entryBatch() / 2;
    }

    /**
     * The executor's pass for writers that handed their eviction off ({@code NativeCache.maintain}):
     * a batch once the count is past the bound, or with {@code ahead} within {@link #aheadMargin}
     * of it; then the pages the batches retired are recycled here, so that a writer that needs a
     * page finds one free instead of recycling (zeroing) it itself: its amortized routine pass and
     * its waits for a page did, ~9% of one thread's inserts at 10K entries in a profile
     * (docs/speed-work.md, forty-fourth session).
     */
    void evictHandedOff(boolean ahead) {
        if (entries() > cache.maximumEntries - (ahead ? aheadMargin() : 0) && (ahead || !cache.borrowedRoom())) {
            makeRoom(Goal.ENTRY, 0);
        }
        if (hasRetired()) {
            reclaim();
        }
    }

    /** Free pages below which maintenance is due (the low watermark): a batch. */
    int lowWatermarkPages() {
        return pageBatch();
    }

    /** An explicit cleanUp: every expired entry and dead record at the queues' ends removed, then the routine pass. */
    void cleanUp() {
        expirePages(Integer.MAX_VALUE);
        dropDeadEverywhere(1 << 16);
        routine(false); // the queues back to their targets (a window change leaves protected over)
    }

    /** Entries the cache holds, the evictor's removals not yet subtracted included. */
    private long entries() {
        return cache.entries.get() - uncounted;
    }

    /**
     * Subtracts the removals not yet counted from the cache's entry count: at the end of every
     * maintenance pass, before the maintenance lock is released (however the pass ended).
     */
    void countRemovals() {
        if (uncounted != 0) {
            cache.entries.addAndGet(-uncounted);
            uncounted = 0;
        }
    }

    List<Removal> takeRemovals() {
        if (removals.isEmpty()) {
            return List.of();
        }
        List<Removal> out = removals;
        removals = new ArrayList<>();
        return out;
    }

    /** Victims sent to their queue's head for winning too many duels in a row (for tests). */
    long defenderRotations() {
        return rotations;
    }

    /** The most live records one eviction has looked at so far (for tests of bounded work). */
    int maxExaminedPerEviction() {
        return Math.max(maxExamined, examined);
    }

    private enum Step {
        NOTHING,
        WAITING,
        /** No record judged, but the walk can go on at once. */
        BUSY,
        PAGE_RETIRED,
        /** A dead record passed, or an expired one removed. */
        DROPPED,
        /** A live record copied: a second chance, a promotion to main, or compaction. */
        MOVED,
        EVICTED,
        /** A live record left where it is. */
        KEPT
    }

    /** What {@link #act} does with a record that is live and not expired. */
    private enum Action {
        KEEP,
        EVICT,
        /** Copy, or evict if there is no room for the copy (memory is needed). */
        MOVE,
        /** Copy, or keep if there is no room (housekeeping, which must never cost an entry). */
        MOVE_IF_ROOM
    }

    /** Whether the window holds more entries than the policy wants it to. */
    private boolean windowOverTarget() {
        return windowEntries() > windowTargetNow();
    }

    /** Entries in the window: all but main's (new records go to the window, and the entry count has them). */
    long windowEntries() {
        return entries() - cache.queues.main();
    }

    private long windowTargetNow() {
        return policy.windowTarget(capacity());
    }

    /** Whether the window holds fewer entries than its target, by more than one. */
    private boolean windowUnderTarget() {
        return windowEntries() < policy.windowTarget(capacity()) - 1;
    }

    /** Entries the cache holds when full: its bound, or (bounded by bytes) what it holds now. */
    private long capacity() {
        return cache.maximumEntries != Long.MAX_VALUE ? cache.maximumEntries : entries();
    }

    /**
     * Accesses drained since the policy last adapted; under the maintenance lock. Here, not on
     * the cache object, whose first lines (the seed, the shard mask) every operation reads: a
     * drain's write there cost the other core a miss (docs/speed-work.md, twenty-fifth session).
     */
    private long drainedSinceAdapt;

    /** Counts {@code n} accesses drained; returns how many have been since the policy last adapted. */
    long drained(long n) {
        return drainedSinceAdapt += n;
    }

    /**
     * Feeds the cache's hits and misses to the hill climber; when it raises the window's target,
     * that many of main's oldest records are to move to the window (the maintenance pass
     * moves them). The window dipping below its target otherwise (after a batch of evictions, say)
     * moves nothing: main's records would be demoted for no reason.
     */
    void adapt(long hits, long misses) {
        drainedSinceAdapt = 0;
        long before = policy.windowTarget(capacity());
        policy.adapt(hits, misses);
        long after = policy.windowTarget(capacity());
        transferQuota = after > before ? transferQuota + (after - before) : 0;
    }

    /**
     * Whether the cache is full enough that records must win a duel to enter main: within an
     * eviction batch of its bound (after a batch of evictions the cache is a batch below the
     * bound, and the next inserts must not slip into main unopposed).
     */
    private boolean full() {
        return cache.maximumEntries != Long.MAX_VALUE
                ? entries() >= cache.maximumEntries - entryBatch()
                : !store.writerCanTakePages(2 * pageBatch());
    }

    /**
     * One unit of eviction work, evicting if memory or an entry slot is needed. While the window
     * has a record, its oldest is the candidate that meets main's victim, whatever the window's
     * size (a flood of new keys must win against the main queue to displace it); the window's
     * target decides only where a winning candidate goes.
     */
    private Step evictStep(boolean compact) {
        // Writers' active page is left alone while main has records: sealing it would send
        // every writer for a fresh page after each eviction.
        // Compaction frees pages without evicting: the window gives up only its excess (moved to
        // main), and main's oldest records are copied forward.
        boolean compactOnly = compact && !windowOverTarget();
        LogCursor.Next next = compactOnly ? LogCursor.Next.NOTHING : findCandidate(false);
        if (next == LogCursor.Next.RECORD) {
            Step step = fromWindow(compact, true);
            if (step != null) {
                return step;
            }
            // Compaction, while the window's oldest page waits to go to main whole: main's turn.
        } else if (next != LogCursor.Next.NOTHING) {
            return passed(window, next);
        }
        next = findVictimMovingPages();
        if (next == LogCursor.Next.RECORD) {
            return fromMain(compact);
        }
        if (next != LogCursor.Next.NOTHING) {
            return passed(victim, next);
        }
        next = findCandidate(true);
        if (next == LogCursor.Next.RECORD) {
            return fromWindow(compact && windowOverTarget(), false);
        }
        return passed(window, next);
    }

    /**
     * Puts {@link #window} on a record at the oldest end of one of the window's FIFOs, which
     * take turns (records of different writer stripes have no order between them). Returns
     * RECORD; PAGE_RETIRED when one of them passed a page (the caller retires it); WAITING if a FIFO's oldest
     * record is still being written and no other has one; else NOTHING.
     */
    private LogCursor.Next findCandidate(boolean mayTakeActive) {
        boolean waiting = false;
        int n = windows.length;
        int start = nextWindow;
        // The FIFOs that hold pages, from start to the last, then from the first to start: on a
        // machine of many cores most are empty, and asking each cursor in turn cost one thread's
        // inserts at 10K a quarter more instructions with 32 stripes than with 2.
        for (int pass = 0; pass < 2; pass++) {
            int to = pass == 0 ? n : start;
            for (int at = store.nextQueued(pass == 0 ? start : 0, to); at >= 0; at = store.nextQueued(at + 1, to)) {
                LogCursor cursor = windows[at];
                LogCursor.Next next;
                do {
                    next = cursor.next(mayTakeActive);
                } while (next == LogCursor.Next.BUSY);
                if (next == LogCursor.Next.RECORD) {
                    window = cursor;
                    // A wrap, not `%`: a division per candidate (one thread's inserts at 10K ~3% faster).
                    nextWindow = at + 1 == n ? 0 : at + 1;
                    return next;
                }
                if (next == LogCursor.Next.PAGE_RETIRED) {
                    window = cursor; // the caller retires the page
                    return next;
                }
                waiting |= next == LogCursor.Next.WAITING;
            }
        }
        return waiting ? LogCursor.Next.WAITING : LogCursor.Next.NOTHING;
    }

    private Step passed(LogCursor cursor, LogCursor.Next next) {
        return switch (next) {
            case WAITING -> Step.WAITING;
            case BUSY -> Step.BUSY;
            case PAGE_RETIRED -> {
                retire(cursor.retiredPage);
                yield Step.PAGE_RETIRED;
            }
            default -> Step.NOTHING;
        };
    }

    /**
     * Puts {@link #victim} on main's oldest record: probation's, or protected's when probation is
     * empty. Returns what the cursor found.
     */
    private LogCursor.Next findVictim(boolean mayTakeActive) {
        victim = probation;
        LogCursor.Next next = probation.next(mayTakeActive);
        if (next == LogCursor.Next.NOTHING) {
            victim = protect;
            next = protect.next(mayTakeActive);
        }
        return next;
    }

    /**
     * {@link #findVictim} for an eviction: while main's oldest record is on a sealed page whose
     * records from it on were all read since they were last looked at, that page goes to
     * protected's head whole ({@link #movePageWhole}) rather than record by record, up to {@link
     * #MAX_PAGE_MOVES} pages per eviction. A page from probation is a page of promotions, for
     * which protected then gives up its excess, as after a promotion.
     */
    private LogCursor.Next findVictimMovingPages() {
        for (; ; ) {
            LogCursor.Next next = findVictim(true);
            if (next != LogCursor.Next.RECORD || pageMoves >= MAX_PAGE_MOVES) {
                return next;
            }
            boolean fromProbation = victim.queue == PageStore.PROBATION;
            long moved = movePageWhole(victim, false, 0);
            if (moved < 0) {
                return next;
            }
            if (fromProbation) {
                // Protected gives up the excess by pages while it can (an unread page of it moves
                // to probation whole); the copies stay bounded by one promotion's demotions.
                demoteExcess(DEMOTIONS_PER_PROMOTION);
            }
        }
    }

    /**
     * Moves the page under {@code cursor}, a sealed page, to the young end of a queue whole,
     * without copying a record, finding an index word or taking a lock: its locations do not
     * change, so the index and readers do not notice. The records before the cursor's were dealt
     * with already (moved, evicted or dead); the page moves only if all records from the cursor's
     * on would have gone to the same place one by one. All read since they were last looked at
     * go round again: on a page of main to protected's head, each count lowered by one in place
     * (probation's promotions, or protected's second chances); on a page of the window to the
     * window's head, counts cleared (its second chances). With {@code unreadToProbation}, all
     * unread go to probation's head (protected's demotions, or the window's records that go to
     * main unopposed: its overflow, or compaction's), if at most twice {@code maxUnread} of them
     * are live (the excess of the queue they leave: it may end up to half a page under its
     * target). And only if at least {@link #PAGE_MOVE_LIVE_SHARE} of the page's records are
     * live: a page with dead records is better passed record by record, which frees their bytes.
     * Returns the live records moved; {@link #PAGE_WAITS} for a page of the window that only its
     * excess held back; or -1 if the page was not moved (it is then not looked at again).
     *
     * <p>Why: after a phase in which every entry was read, each eviction met only records owed
     * a second chance, each a copy and its index word found again under its shard's lock, up to
     * {@link #MAX_EXAMINED} per eviction: ~7 µs per insert for the first ~650K inserts of new
     * keys into a 10M-entry cache, 4.4 s in all, where OHC's first inserts cost 1.0 s more than
     * its later ones; with whole pages of main 0.9 s (docs/speed-work.md, thirty-ninth session).
     * And a full cache whose values change length appends a record per overwrite, which went
     * from the window to main one copy at a time, as many copies as puts, besides compaction's
     * own (fortieth session).
     *
     * <p>No record's index word is looked at: a page counts its live records (those placed on it,
     * less those the evictor took off and those that left it without the evictor, {@link
     * PageStore#moveOldest}), and its queue changes in the same atomic step that reads the count,
     * so the queue counts stay exact. A move reads the page's record headers and writes their
     * layout bytes; a page of a writer stripe's window also has each record's put counted in the
     * sketch, as the cursor would have counted it passing.
     */
    private long movePageWhole(LogCursor cursor, boolean unreadToProbation, long maxUnread) {
        if (!cursor.onSealedPage() || cursor.pageRefused) {
            return -1;
        }
        long moved = tryMovePageWhole(cursor, unreadToProbation, maxUnread);
        cursor.pageRefused = moved == -1;
        return moved;
    }

    /**
     * {@link #movePageWhole} for the window's candidate's page: to main if {@code unopposed} (the
     * window's records go there without a duel: compaction, or its overflow) and the window is
     * over its target; a page of second chances at any time, up to {@link #MAX_PAGE_MOVES} per
     * eviction unless unopposed. Returns the live records moved, -1, or {@link #PAGE_WAITS}.
     */
    private long moveWindowPageWhole(boolean unopposed) {
        if (!unopposed && pageMoves >= MAX_PAGE_MOVES) {
            return -1;
        }
        long excess = unopposed ? windowEntries() - windowTargetNow() : 0;
        return movePageWhole(window, excess > 0, excess);
    }

    /**
     * {@link #movePageWhole}'s answer for a page of the window that would go to main whole but for
     * the window's excess, too small yet: its records wait for the excess to grow rather than
     * leave one by one, after which the page would no longer be live enough to move. The window
     * then stays over its target by less than half a page.
     */
    static final long PAGE_WAITS = -2;

    private long tryMovePageWhole(LogCursor cursor, boolean unreadToProbation, long maxUnread) {
        int page = cursor.page();
        if (cursor.recordsOnPage >= 0
                && unreadToProbation
                && store.liveRecords(page, cursor.recordsOnPage, cursor.tookOnPage) > 2 * maxUnread) {
            return PAGE_WAITS; // as at the last look, which walked the page: no walk again yet
        }
        MemorySegment segment = store.pageById(page);
        long limit = cursor.limit();
        RecordLayout.Header h = pageHeader;
        int records = 0;
        boolean read = false;
        for (long at = cursor.offset(); at < limit; at = h.end) {
            int layout = RecordLayout.layout(segment, at);
            boolean readThis = (layout & RecordLayout.ACCESS_MASK) != 0;
            if ((layout & RecordLayout.DECIDED) == 0
                    || (records > 0 && readThis != read)
                    || (!readThis && !unreadToProbation)) {
                return -1;
            }
            read = readThis;
            h.parse(segment, at, limit, store.shapes());
            if (records == pageRecords.length) {
                pageRecords = java.util.Arrays.copyOf(pageRecords, records * 2);
            }
            pageRecords[records++] = at;
        }
        if (records == 0) {
            return -1;
        }
        // The records before the cursor's were dealt with (moved, evicted or dead): they count
        // against the page's live share only.
        int passed = 0;
        for (long at = 0; at < cursor.offset(); at = h.end) {
            h.parse(segment, at, limit, store.shapes());
            passed++;
        }
        long live = store.liveRecords(page, passed + records, cursor.tookOnPage);
        if (live < (passed + records) * PAGE_MOVE_LIVE_SHARE) {
            return -1; // mostly dead
        }
        boolean inWindow = cursor.queue == PageStore.WINDOW;
        if (!read && live > 2 * maxUnread) {
            // A move that would take its queue more than half a page under its target.
            if (!inWindow) {
                return -1;
            }
            cursor.recordsOnPage = passed + records;
            return PAGE_WAITS;
        }
        if (cursor.holdsPuts) {
            // The puts that appended them, counted as the cursor counts each record it passes.
            for (int i = cursor.putCounted ? 1 : 0; i < records; i++) {
                h.parse(segment, pageRecords[i], limit, store.shapes());
                policy.record(KeyHash.hash(cache.seed, segment, h.keyOffset, h.keyLength));
            }
        }
        if (read) {
            for (int i = 0; i < records; i++) {
                if (inWindow) {
                    RecordLayout.setAccess(segment, pageRecords[i], 0);
                } else {
                    RecordLayout.lowerAccess(segment, pageRecords[i]);
                }
            }
        }
        int to = read ? (inWindow ? PageStore.WINDOW : PageStore.PROTECTED) : PageStore.PROBATION;
        live = store.moveOldest(cursor.stripe, store.evictorStripe(to), page, passed + records, cursor.tookOnPage);
        cursor.pageMoved();
        cache.queues.evictorMoved(cursor.queue, to, live);
        if (inWindow && to != PageStore.WINDOW) {
            policy.leftWindowTogether(live);
        }
        pageMoves++;
        pagesMovedWhole++;
        if (inWindow) {
            windowPagesMovedWhole++;
        }
        return live;
    }

    /**
     * Pages one eviction may move whole (see {@link #movePageWhole}), so that its work stays
     * bounded: a page of promotions and a page of demotions.
     */
    static final int MAX_PAGE_MOVES = 2;

    /** The share of a page's records that must be live for it to move whole. */
    static final double PAGE_MOVE_LIVE_SHARE = 15.0 / 16;

    /** Pages moved whole since the last eviction. */
    private int pageMoves;

    /** Pages moved whole since the cache was built (for tests). */
    private long pagesMovedWhole;

    long pagesMovedWhole() {
        return pagesMovedWhole;
    }

    /** Of {@link #pagesMovedWhole}, the window's pages (for tests). */
    private long windowPagesMovedWhole;

    long windowPagesMovedWhole() {
        return windowPagesMovedWhole;
    }

    /** The offsets of a page's records while {@link #movePageWhole} looks at it. */
    private long[] pageRecords = new long[64];

    private final RecordLayout.Header pageHeader = new RecordLayout.Header();

    /** Moves the window's candidate to main unopposed if there is room (else keeps it). */
    private Step promote() {
        // By pages only while the cache fills (every record then goes to main this way once). In
        // a full cache the overflow is the few records a race left over: the duels' path stays as
        // it was (docs/speed-work.md, fortieth session).
        long moved = full() ? -1 : moveWindowPageWhole(true);
        if (moved >= 0) {
            return Step.MOVED;
        }
        if (moved == PAGE_WAITS) {
            return Step.KEPT; // the excess stays until the page can go whole: no record trickles off it
        }
        long hash = hashOf(window);
        Step second = secondChance(window, hash, Action.MOVE_IF_ROOM);
        return second != null ? second : act(window, hash, Action.MOVE_IF_ROOM, PageStore.PROBATION, 0);
    }

    /**
     * While the protected queue holds more entries than its share of main, its oldest records
     * leave it, up to {@code budget} of them: one read since it was last looked at goes round
     * again (its count lowered), one that was not goes to the head of probation, where it must be
     * read again before it reaches the victim's place. Records are only moved, never evicted.
     */
    private void demoteExcess(int budget) {
        for (; ; ) {
            long excess = cache.queues.protectedEntries() - policy.protectedTarget(capacity(), windowTargetNow());
            if (excess <= 0 || (budget <= 0 && pageMoves >= MAX_PAGE_MOVES)) {
                return;
            }
            LogCursor.Next next = protect.next(false);
            if (next == LogCursor.Next.PAGE_RETIRED) {
                retire(protect.retiredPage); // the page left the queue: always retired
                budget--;
                continue;
            }
            if (next != LogCursor.Next.RECORD) {
                return;
            }
            if (pageMoves < MAX_PAGE_MOVES && movePageWhole(protect, true, excess) >= 0) {
                continue; // a page moved whole is not a record moved: the budget is for copies
            }
            if (budget-- <= 0) {
                return; // the cursor stays on the record
            }
            long hash = hashOf(protect);
            int access = protect.access();
            int to = access > 0 ? PageStore.PROTECTED : PageStore.PROBATION;
            if (act(protect, hash, Action.MOVE_IF_ROOM, to, access > 0 ? access - 1 : 0) == Step.KEPT) {
                return; // no room to move it
            }
        }
    }

    /**
     * If the record under {@code cursor} was read since it was last looked at and its queue's
     * allowance of second chances lasts, gives it one and returns the step; else null. A window
     * record goes to the window's head with its count cleared; a main record goes to the head of
     * the protected queue with its count lowered by one (from probation, that is its promotion;
     * the protected queue then gives up its excess to probation).
     */
    private Step secondChance(LogCursor cursor, long hash, Action action) {
        boolean inWindow = cursor.queue == PageStore.WINDOW;
        int access = cursor.access();
        if (access == 0 || (inWindow ? windowReinsertions : mainReinsertions) >= MAX_REINSERTIONS) {
            return null;
        }
        int to = inWindow ? PageStore.WINDOW : PageStore.PROTECTED;
        Step step = act(cursor, hash, action, to, inWindow ? 0 : access - 1);
        if (step == Step.MOVED) {
            if (inWindow) {
                windowReinsertions++;
            } else {
                mainReinsertions++;
                if (cursor.queue == PageStore.PROBATION) {
                    demoteExcess(DEMOTIONS_PER_PROMOTION);
                }
            }
        }
        return step;
    }

    /**
     * The window's oldest record when memory or an entry slot is needed: a second chance in the
     * window if it was read there, else a candidate, which meets main's victim (or, when {@code
     * compact}, moves to main unopposed). A candidate that wins moves to main if the window is
     * over its target and back to the window's head if not; the loser is evicted.
     */
    private Step fromWindow(boolean compact, boolean mayWait) {
        long moved = moveWindowPageWhole(compact);
        if (moved >= 0) {
            return Step.MOVED;
        }
        if (moved == PAGE_WAITS && mayWait) {
            return null;
        }
        long hash = hashOf(window);
        Step second = secondChance(window, hash, Action.MOVE);
        if (second != null) {
            return second;
        }
        if (compact) {
            return act(window, hash, Action.MOVE, PageStore.PROBATION, 0);
        }
        LogCursor.Next next = findVictimMovingPages();
        if (next == LogCursor.Next.NOTHING) {
            return act(window, hash, Action.MOVE, PageStore.PROBATION, 0);
        }
        if (next != LogCursor.Next.RECORD) {
            return passed(victim, next);
        }
        if (victim.location != memoVictim) {
            memoVictim = victim.location;
            memoVictimHash = hashOf(victim);
            memoVictimFrequency = -1;
        }
        long victimHash = memoVictimHash;
        Step victimSecond = secondChance(victim, victimHash, Action.MOVE);
        if (victimSecond != null) {
            return victimSecond;
        }
        if (memoVictimFrequency < 0) {
            memoVictimFrequency = policy.frequency(victimHash);
        }
        if (policy.admitByFrequency(candidateFrequency(hash), memoVictimFrequency)) {
            int to = windowOverTarget() ? PageStore.PROBATION : PageStore.WINDOW;
            Step promoted = act(window, hash, Action.MOVE, to, 0);
            if (promoted != Step.MOVED) {
                return promoted; // the candidate is gone after all; the victim stays
            }
            return act(victim, victimHash, Action.EVICT, 0, 0);
        }
        if (victim.location != defender) {
            defender = victim.location;
            defenses = 0;
        }
        if (++defenses >= defenseLimit) {
            // Moved before the candidate is evicted: the move is the victim's share of this
            // eviction's bounded work. Only if a page is free: rotating must never cost an entry.
            defender = -1;
            if (act(victim, victimHash, Action.MOVE_IF_ROOM, victim.queue, victim.access()) == Step.MOVED) {
                rotations++;
            }
        }
        return act(window, hash, Action.EVICT, 0, 0);
    }

    /**
     * The window candidate's estimate. A record a put appended has its put counted first, on the
     * line the estimate reads, once (the cursor may stay on it, waiting for the victim): the
     * write buffer left that count to the evictor ({@code NativeCache.recordWrite}), so the
     * candidate's count includes the insertion that made it a candidate, as before.
     */
    private int candidateFrequency(long hash) {
        if (window.holdsPuts && !window.putCounted) {
            window.putCounted = true;
            return policy.recordAndFrequency(hash);
        }
        return policy.frequency(hash);
    }

    /**
     * Duels one victim may win in a row before it goes to its queue's head: {@link
     * #MIN_DEFENSES}, or an eighth of the cache's capacity if more.
     */
    private long maxDefenses() {
        return Math.max(MIN_DEFENSES, capacity() / 8);
    }

    /**
     * {@link #maxDefenses}, as of the start of this call of {@link #makeRoom}: without an entry
     * bound the capacity is the entry count, whose line every insert writes, and reading it in
     * every duel cost a cache bound by bytes ~2.5% of an insert.
     */
    private long defenseLimit = MIN_DEFENSES;

    /** Main's victim when the window is within its target: a second chance or eviction. */
    private Step fromMain(boolean compact) {
        LogCursor main = victim;
        long hash = hashOf(main);
        Step second = secondChance(main, hash, Action.MOVE);
        if (second != null) {
            return second;
        }
        int access = main.access();
        if (compact && main.sealOwnPage()) {
            // Never copy from the page the copies land in (they would be walked again): the
            // queue's active page is sealed first, its rest left empty.
            long bytes = main.end - store.offset(main.location);
            Step step = act(main, hash, Action.MOVE, main.queue, access);
            compactionAllowance -= step == Step.MOVED ? bytes : 0;
            return step;
        }
        return act(main, hash, Action.EVICT, 0, 0);
    }

    /** Dead records a writer waiting for a page has passed at the queues' oldest ends at most. */
    static final int DEAD_DROP_BUDGET = 4096;

    /** {@link #dropDead} on every queue, up to {@code budget} records each. */
    private void dropDeadEverywhere(int budget) {
        for (LogCursor cursor : windows) {
            dropDead(cursor, budget);
        }
        dropDead(probation, budget);
        dropDead(protect, budget);
    }

    /** Passes dead and expired records at the oldest end of a queue, up to {@code budget}. */
    private void dropDead(LogCursor cursor, int budget) {
        while (budget-- > 0) {
            LogCursor.Next next = cursor.next(false);
            if (next == LogCursor.Next.PAGE_RETIRED) {
                retire(cursor.retiredPage);
            } else if (next != LogCursor.Next.RECORD || act(cursor, hashOf(cursor), Action.KEEP, 0, 0) == Step.KEPT) {
                return;
            }
        }
    }

    private long hashOf(LogCursor cursor) {
        return KeyHash.hash(cache.seed, cursor.segment, cursor.header.keyOffset, cursor.header.keyLength);
    }

    /** {@link #act(long, MemorySegment, RecordLayout.Header, int, long, Action, int, int)} on the
     * record under a cursor, which moves past it unless it is kept. */
    private Step act(LogCursor cursor, long hash, Action action, int toQueue, int access) {
        Step step = act(
                cursor, cursor.location, cursor.segment, cursor.header, cursor.queue, hash, action, toQueue, access);
        if (step != Step.KEPT) {
            if (cursor.holdsPuts && !cursor.putCounted) {
                policy.record(hash); // the put that appended it (see NativeCache.recordWrite)
            }
            cursor.advance();
        }
        if (step == Step.MOVED) {
            examined++; // a live entry looked at and kept: the work bounded per eviction
        }
        return step;
    }

    /**
     * Under the record's shard lock: a dead record (no word leads to it) is left alone; an
     * expired one is removed; a live one is kept, evicted, or copied to the head of {@code
     * toQueue} with access count {@code access} (evicted if there is no room for the copy).
     */
    private Step act(
            LogCursor via,
            long location,
            MemorySegment segment,
            RecordLayout.Header h,
            int queue,
            long hash,
            Action action,
            int toQueue,
            int access) {
        IndexShard shard = cache.shardFor(hash);
        RemovalCause cause;
        Removal removal;
        shard.lock();
        try {
            int slot = shard.slotOfLocation(hash, location);
            if (slot < 0) {
                return Step.DROPPED;
            }
            if (h.padded()) {
                // Parsed without the lock: its value's length may have changed since (its key,
                // end and every offset cannot; see RecordLayout). Under the lock it cannot.
                h.parse(segment, store.offset(location), store.pageSize(), store.shapes());
            }
            boolean expired =
                    h.expires() && cache.maintenanceNow() - RecordLayout.readDeadline(segment, h.deadlineOffset) >= 0;
            int recordBytes = (int) (h.end - store.offset(location));
            if (!expired) {
                if (action == Action.KEEP) {
                    return Step.KEPT;
                }
                if (action != Action.EVICT
                        && copyForward(shard, slot, location, segment, h, recordBytes, toQueue, access)) {
                    cache.queues.evictorMoved(queue, toQueue);
                    took(via, location, queue);
                    if (queue == PageStore.WINDOW && toQueue != PageStore.WINDOW) {
                        policy.leftWindow(hash);
                    }
                    return Step.MOVED;
                }
                if (action == Action.MOVE_IF_ROOM) {
                    return Step.KEPT;
                }
            }
            cause = expired ? RemovalCause.EXPIRED : RemovalCause.SIZE;
            shard.removeAt(slot, recordBytes);
            if (++uncounted >= uncountedMax) {
                countRemovals();
            }
            cache.queues.evictorRemoved(queue);
            took(via, location, queue);
            removal = cache.unlinked(location, h, null, cause);
        } finally {
            shard.unlock();
        }
        if (cause == RemovalCause.EXPIRED) {
            cache.stats.expirations.increment();
        } else {
            // A ghost for the window's climber: policy state, under the maintenance lock only, so
            // remembered after the shard's lock, which a writer on another core may be waiting for.
            policy.evicted(hash, queue == PageStore.WINDOW);
            cache.stats.countEviction();
            maxExamined = Math.max(maxExamined, examined);
            examined = 0;
            windowReinsertions = 0;
            mainReinsertions = 0;
            if (pageMoves != 0) {
                pageMoves = 0; // written only when set: two writers' evictions take turns with this object's lines
            }
        }
        if (removal != null) {
            removals.add(removal);
        }
        return cause == RemovalCause.EXPIRED ? Step.DROPPED : Step.EVICTED;
    }

    /**
     * Counts the record at {@code location}, of {@code queue}, taken off its page (moved, evicted
     * or expired), for the page's count of live records ({@link PageStore#liveRecords}): on the
     * cursor {@code via} for a page of the window under one, else on the page. The cursor's
     * count is a field the evictor writes on every step anyway; the page's is a line of its own,
     * and writing it on every eviction from the window looked like ~5% of two threads' inserts
     * at 10K (docs/speed-work.md, fortieth session).
     */
    private void took(LogCursor via, long location, int queue) {
        if (via != null && queue == PageStore.WINDOW) {
            via.tookOnPage++;
        } else {
            store.evictorTook(location);
        }
    }

    /**
     * Removes the expired records of up to {@code maxPages} pages whose earliest deadline has
     * passed, wherever the pages are in the log, and re-queues each page by the earliest
     * deadline of the records it keeps. Only pages holding an expired entry are looked at, so the
     * work is proportional to the pages with expired entries, not to the cache.
     */
    private void expirePages(int maxPages) {
        if (!store.anyDeadlineNoted()) {
            return; // no ticker reading, no monitor: nothing in this cache ever expires yet
        }
        for (int n = 0; n < maxPages; n++) {
            long now = cache.maintenanceNow();
            int expiring = store.pollExpiringPage(now);
            if (expiring < 0) {
                return;
            }
            long seen = store.minDeadline(expiring);
            MemorySegment segment = store.pageById(expiring);
            long limit = store.limit(expiring);
            long remaining = Long.MAX_VALUE;
            boolean undecided = limit < 0;
            RecordLayout.Header h = new RecordLayout.Header();
            for (long at = 0; !undecided && at < limit; at = h.end) {
                if ((RecordLayout.layout(segment, at) & RecordLayout.DECIDED) == 0) {
                    undecided = true; // a writer is still installing: look again shortly
                    break;
                }
                h.parse(segment, at, limit, store.shapes());
                long end = h.end;
                long location = store.location(expiring, at);
                long hash = KeyHash.hash(cache.seed, segment, h.keyOffset, h.keyLength);
                Step step = act(null, location, segment, h, store.queueOf(location), hash, Action.KEEP, 0, 0);
                if (step == Step.KEPT && h.expires()) {
                    long deadline = RecordLayout.readDeadline(segment, h.deadlineOffset);
                    if (remaining == Long.MAX_VALUE || deadline - remaining < 0) {
                        remaining = deadline;
                    }
                }
                h.end = end;
            }
            if (undecided) {
                store.requeueExpiring(expiring, now + 1_000_000);
                return;
            }
            store.resetMinDeadline(expiring, seen, remaining);
        }
    }

    /** Copies the record to the head of {@code toQueue} and repoints its word; false if no room. */
    private boolean copyForward(
            IndexShard shard,
            int slot,
            long location,
            MemorySegment segment,
            RecordLayout.Header h,
            int recordBytes,
            int toQueue,
            int access) {
        boolean expires = h.expires();
        int format = h.layout & RecordLayout.FORMAT_MASK; // the shapes never change: the copy keeps it
        // A padded copy keeps room for its value to change length, trimmed if the value shrank,
        // and none while the budget has none to spare (see NativeCache.resizeInPlace).
        int room = h.padded() && cache.resizeInPlace
                ? Math.min(h.capacity, NativeCache.paddedCapacity(h.capacity, h.valueLength))
                : h.valueLength;
        long target = store.reserve(store.evictorStripe(toQueue), format, h.keyLength, room, expires, h.large());
        if (target == PageStore.NO_PAGE) {
            return false;
        }
        MemorySegment to = store.page(target);
        long at = store.offset(target);
        long deadline = expires ? RecordLayout.readDeadline(segment, h.deadlineOffset) : 0;
        long keyAt = RecordLayout.writeHeader(
                to,
                at,
                format,
                h.keyLength,
                h.valueLength,
                room,
                h.large(),
                expires,
                (h.layout & RecordLayout.FIXED_TTL) != 0,
                deadline);
        long payload = h.keyLength + (h.large() ? RecordLayout.EXTENT_ID_BYTES : h.valueLength);
        MemorySegment.copy(segment, h.keyOffset, to, keyAt, payload);
        RecordLayout.setAccess(to, at, access);
        RecordLayout.markDecided(to, at); // before the word is published: see RecordLayout
        if (expires) {
            store.noteDeadline(target, deadline);
        }
        int newBytes = (int) (keyAt + h.keyLength + (h.large() ? RecordLayout.EXTENT_ID_BYTES : room) - at);
        shard.relocate(slot, target, recordBytes, newBytes);
        if (toQueue != PageStore.WINDOW) {
            store.evictorWrote(target);
        }
        return true;
    }

    private void retire(int retiredPage) {
        if (retiredCount == retired.length) {
            retired = java.util.Arrays.copyOf(retired, retiredCount * 2);
        }
        retired[retiredCount++] = retiredPage;
    }

    /** Waits out a reader grace period, then reuses retired pages and frees retired memory. */
    private void reclaim() {
        List<NativeMemory.Block> tables = cache.takeRetiredTables();
        boolean extents = cache.large.hasRetired();
        if (retiredCount == 0 && tables.isEmpty() && !extents) {
            return;
        }
        long[] extentIds = cache.large.takeRetired();
        forgetVictim(); // recycled pages make old locations another record's
        cache.epochs.synchronize();
        for (int i = 0; i < retiredCount; i++) {
            store.recycle(retired[i]);
        }
        retiredCount = 0;
        // Indexed, not for-each: the empty list's iterator was the only allocation on the insert
        // path (0.24 bytes per insert at 10K entries, where pages retire most often).
        for (int i = 0; i < tables.size(); i++) {
            NativeMemory.Block table = tables.get(i);
            table.free();
            cache.budget.release(table.segment().byteSize());
        }
        for (long id : extentIds) {
            cache.large.free(id);
        }
    }

    private void forgetVictim() {
        memoVictim = -1;
        memoVictimFrequency = -1;
    }

    /** Share of the log's pages that live records fill. */
    private double liveShare() {
        long allocated = store.allocatedBytes();
        return allocated == 0 ? 1.0 : (double) liveBytes() / allocated;
    }

    private long liveBytes() {
        long live = 0;
        for (IndexShard shard : cache.shards) {
            live += shard.liveBytes();
        }
        return live;
    }

    /** Sets {@link NativeCache#resizeInPlace} from the live records' share of the budget's room. */
    private void judgePadding() {
        boolean pad = liveBytes() < CacheSizing.PAD_BELOW * cache.recordRoom();
        if (pad != cache.resizeInPlace) {
            cache.resizeInPlace = pad;
        }
    }
}
