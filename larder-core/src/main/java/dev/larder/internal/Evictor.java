package dev.larder.internal;

import dev.larder.RemovalCause;
import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Reclaims memory by walking the log from its oldest record: FIFO with a second chance.
 *
 * <p>For the record under the cursor: if no index word leads to it, it is dead (overwritten,
 * removed or abandoned) and skipped; if it is past its deadline it is removed as EXPIRED; if it
 * was read since it was written (its access counter is non-zero) and the reinsertion allowance
 * of this pass is not spent, it is copied to the head of the log with its counter decremented,
 * its word repointed; otherwise it is evicted (SIZE). When the live records fill little of the
 * log, the evictor copies live records forward instead of evicting them (compaction), so an
 * overwrite-heavy workload does not cost entries. Once the cursor passes the end of a sealed
 * page, the page is retired and, after a reader grace period, zeroed and reused.
 *
 * <p>Bounded work: one call examines at most {@link #MAX_STEPS} records, and at most {@link
 * #MAX_REINSERTIONS} second chances per evicted entry, so no access pattern makes one eviction
 * walk the whole cache.
 *
 * <p>Runs under the cache's maintenance lock, one thread at a time. It holds one shard lock at
 * a time, never waits while holding it, and runs no user code: removals are collected and
 * delivered to the listener after the maintenance lock is released.
 */
final class Evictor {
    enum Goal {
        /** A free page for writers. */
        PAGE,
        /** A number of bytes of budget free (for a large value or index growth). */
        BYTES,
        /** Room for one more entry under maximumEntries. */
        ENTRY
    }

    /** One removal to report to the listener. */
    record Removal(Object key, Object value, RemovalCause cause) {}

    static final int MAX_STEPS = 1 << 20;
    static final int MAX_REINSERTIONS = 16;
    /** How long eviction waits for a writer that reserved the oldest record to install it. */
    static final long WAIT_LIMIT_NANOS = 10_000_000_000L;

    private final NativeCache<?, ?> cache;
    private final PageStore store;
    private final RecordLayout.Header header = new RecordLayout.Header();
    private int page = -1;
    private long offset;
    /** Bytes the current makeRoom call may still copy forward for compaction. */
    private long compactionAllowance;

    private int[] retired = new int[8];
    private int retiredCount;
    private List<Removal> removals = new ArrayList<>();

    Evictor(NativeCache<?, ?> cache) {
        this.cache = cache;
        this.store = cache.store;
    }

    /**
     * Evicts until {@code goal} holds. Returns false if nothing more can be reclaimed. A writer
     * waiting for a page gets a batch of them freed, so the grace period and the lock hand-off
     * are paid once per batch, not once per page.
     */
    boolean makeRoom(Goal goal, long bytes) {
        int batch = goal == Goal.PAGE ? pageBatch() : goal == Goal.ENTRY ? entryBatch() : 1;
        int reinsertions = 0;
        // Compaction frees pages, so it serves a writer waiting for a page; a large value or
        // the index needs budget, which only eviction of live entries gives back for sure.
        boolean compact = goal == Goal.PAGE && liveShare() < CacheSizing.COMPACT_BELOW;
        // Compaction must pay for itself: after copying four pages' worth of live records per
        // page wanted without meeting the goal, the oldest pages are mostly live (or the budget
        // is held by large values), and evicting is the way forward.
        compactionAllowance = 4L * batch * store.pageSize();
        long waitingSince = 0;
        int waits = 0;
        boolean check = true; // whether something happened that may have met the goal
        int retiredThisCall = 0;
        for (int steps = 0; steps < MAX_STEPS; ) {
            if (check) {
                if (goal != Goal.ENTRY && hasRetired()) {
                    reclaim(); // retired pages and evicted large values count only once freed
                }
                if (met(goal, bytes, batch)) {
                    return true;
                }
                check = false;
            }
            Step step = step(true, reinsertions < MAX_REINSERTIONS, compact && compactionAllowance > 0);
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
                case REINSERTED -> reinsertions++;
                case EVICTED, DROPPED_DEAD_OR_EXPIRED -> {
                    reinsertions = step == Step.EVICTED ? 0 : reinsertions;
                    check = goal != Goal.PAGE; // an entry slot, or a large value to free
                }
                case PAGE_RETIRED -> {
                    check = true;
                    // Pages freed here may go straight to other writers: once a batch is freed,
                    // let the waiting writer try again rather than evict on.
                    if (goal == Goal.PAGE && ++retiredThisCall >= batch) {
                        reclaim();
                        return true;
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

    private boolean hasRetired() {
        return retiredCount > 0 || cache.large.hasRetired() || cache.hasRetiredTables();
    }

    /**
     * Entry slots to free at once when maximumEntries binds: 1/512 of them, 1 to 32, so
     * inserts into a full cache take the maintenance lock once per batch, not once each. The
     * cache then holds up to that many fewer entries than its bound (0.2% at most).
     */
    private int entryBatch() {
        return (int) Math.max(1, Math.min(32, cache.maximumEntries / 512));
    }

    /** Pages to free at once for a waiting writer: 1/64 of the cache's pages, 1 to 16. */
    private int pageBatch() {
        return Math.max(1, Math.min(16, store.maxPages() / 64));
    }

    /**
     * @param n pages wanted (PAGE), or entry slots wanted (ENTRY)
     */
    private boolean met(Goal goal, long bytes, int n) {
        return switch (goal) {
            case PAGE -> store.writerCanTakePages(n);
            case BYTES -> store.releaseFreePages(bytes);
            case ENTRY -> cache.entries.get() <= cache.maximumEntries - n;
        };
    }

    /**
     * The routine pass writers run now and then: drop the expired and dead records at the
     * oldest end of the log, keep a few pages free, and free what waits for a grace period.
     */
    void routine() {
        expirePages(4);
        int budgetSteps = 256;
        while (budgetSteps-- > 0) {
            Step s = step(false, false, false);
            if (s != Step.DROPPED_DEAD_OR_EXPIRED && s != Step.PAGE_RETIRED) {
                break;
            }
        }
        if (!store.writerCanTakePages(pageBatch())) {
            makeRoom(Goal.PAGE, 0); // keep a batch of pages free, so writers rarely wait
        }
        reclaim();
    }

    /** An explicit cleanUp: the routine pass, then every retired page and extent freed. */
    void cleanUp() {
        expirePages(Integer.MAX_VALUE);
        int budgetSteps = 1 << 16;
        while (budgetSteps-- > 0) {
            Step s = step(false, false, false);
            if (s != Step.DROPPED_DEAD_OR_EXPIRED && s != Step.PAGE_RETIRED) {
                break;
            }
        }
        reclaim();
    }

    List<Removal> takeRemovals() {
        if (removals.isEmpty()) {
            return List.of();
        }
        List<Removal> out = removals;
        removals = new ArrayList<>();
        return out;
    }

    private enum Step {
        NOTHING,
        WAITING,
        /** No record judged, but the walk can go on at once. */
        BUSY,
        PAGE_RETIRED,
        DROPPED_DEAD_OR_EXPIRED,
        REINSERTED,
        EVICTED,
        KEPT
    }

    /**
     * Handles the record under the cursor.
     *
     * @param evict whether memory is needed (so an active page may be sealed and live
     *     records evicted); false means only dead and expired records are dropped
     * @param mayReinsert whether a recently read record gets a second chance
     * @param compact whether live records are copied forward rather than evicted
     */
    private Step step(boolean evict, boolean mayReinsert, boolean compact) {
        if (page < 0) {
            page = store.oldestPage();
            offset = 0;
            if (page < 0) {
                return Step.NOTHING;
            }
        }
        long limit = store.limit(page);
        if (limit < 0) {
            return Step.WAITING; // being sealed by its stripe
        }
        boolean sealed = store.isSealed(page);
        if (offset >= limit) {
            if (!sealed) {
                if (!evict) {
                    return Step.NOTHING;
                }
                store.sealActive(page);
                limit = store.limit(page);
                if (limit < 0 || !store.isSealed(page)) {
                    return Step.WAITING; // its stripe is sealing it
                }
            }
            if (offset < store.limit(page)) {
                return Step.BUSY; // sealed with more records than we saw: walk them
            }
            store.dequeueOldest();
            retire(page);
            page = -1;
            return Step.PAGE_RETIRED;
        }
        MemorySegment segment = store.pageById(page);
        int layout = RecordLayout.layout(segment, offset);
        if ((layout & RecordLayout.DECIDED) == 0) {
            return Step.WAITING; // a writer is between reserving and installing this record
        }
        if (compact && retiredCount > 0 && store.freePageCount() == 0) {
            // Writers took the free pages: recycle the retired ones so the copies have room
            // (else compaction would turn into eviction).
            reclaim();
        }
        RecordLayout.Header h = header.parse(segment, offset, limit);
        long location = store.location(page, offset);
        long recordEnd = h.end;
        // Never compact an active page: the copies could land in it and be walked again.
        Step result = judge(location, segment, h, evict, mayReinsert, compact && sealed);
        if (result == Step.KEPT) {
            return Step.NOTHING; // a live record at the oldest end: nothing more to drop
        }
        offset = recordEnd;
        return result;
    }

    private Step judge(
            long location,
            MemorySegment segment,
            RecordLayout.Header h,
            boolean evict,
            boolean mayReinsert,
            boolean compact) {
        long hash = KeyHash.hash(cache.seed, segment, h.keyOffset, h.keyLength);
        IndexShard shard = cache.shardFor(hash);
        RemovalCause cause;
        Removal removal;
        shard.lock.lock();
        try {
            int slot = shard.slotOfLocation(hash, location);
            if (slot < 0) {
                return Step.DROPPED_DEAD_OR_EXPIRED;
            }
            boolean expired =
                    h.expires() && cache.ticker.read() - RecordLayout.readDeadline(segment, h.deadlineOffset) >= 0;
            int recordBytes = (int) (h.end - store.offset(location));
            if (!expired) {
                if (!evict) {
                    return Step.KEPT;
                }
                int access = RecordLayout.access(segment, store.offset(location));
                boolean secondChance = mayReinsert && access > 0;
                if ((secondChance || compact) && copyForward(shard, slot, location, segment, h, recordBytes, access)) {
                    if (!secondChance) {
                        compactionAllowance -= recordBytes;
                    }
                    return secondChance ? Step.REINSERTED : Step.DROPPED_DEAD_OR_EXPIRED;
                }
            }
            cause = expired ? RemovalCause.EXPIRED : RemovalCause.SIZE;
            shard.removeAt(slot, recordBytes);
            cache.entries.decrementAndGet();
            removal = cache.unlinked(location, h, null, cause);
        } finally {
            shard.lock.unlock();
        }
        if (cause == RemovalCause.EXPIRED) {
            cache.stats.expirations.increment();
        } else {
            cache.stats.evictions.increment();
        }
        if (removal != null) {
            removals.add(removal);
        }
        return cause == RemovalCause.EXPIRED ? Step.DROPPED_DEAD_OR_EXPIRED : Step.EVICTED;
    }

    /**
     * Removes the expired records of up to {@code maxPages} pages whose earliest deadline has
     * passed, wherever the pages are in the log, and re-queues each page by the earliest
     * deadline of the records it keeps. Only pages holding an expired entry are looked at, so the
     * work is proportional to the pages with expired entries, not to the cache.
     */
    private void expirePages(int maxPages) {
        for (int n = 0; n < maxPages; n++) {
            long now = cache.ticker.read();
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
                h.parse(segment, at, limit);
                long end = h.end;
                Step step = judge(store.location(expiring, at), segment, h, false, false, false);
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

    /** Copies the record to the head of the log and repoints its word; false if no room. */
    private boolean copyForward(
            IndexShard shard,
            int slot,
            long location,
            MemorySegment segment,
            RecordLayout.Header h,
            int recordBytes,
            int access) {
        boolean expires = h.expires();
        long target = store.reserve(store.evictorStripe(), h.keyLength, h.valueLength, expires, h.large());
        if (target == PageStore.NO_PAGE) {
            return false;
        }
        MemorySegment to = store.page(target);
        long at = store.offset(target);
        long deadline = expires ? RecordLayout.readDeadline(segment, h.deadlineOffset) : 0;
        long keyAt = RecordLayout.writeHeader(
                to,
                at,
                h.keyLength,
                h.valueLength,
                h.large(),
                expires,
                (h.layout & RecordLayout.FIXED_TTL) != 0,
                deadline);
        long payload = h.end - h.keyOffset;
        MemorySegment.copy(segment, h.keyOffset, to, keyAt, payload);
        RecordLayout.setAccess(to, at, Math.max(0, access - 1));
        RecordLayout.markDecided(to, at); // before the word is published: see RecordLayout
        if (expires) {
            store.noteDeadline(target, deadline);
        }
        int newBytes = (int) (keyAt + payload - at);
        shard.relocate(slot, target, recordBytes, newBytes);
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
        cache.epochs.synchronize();
        for (int i = 0; i < retiredCount; i++) {
            store.recycle(retired[i]);
        }
        retiredCount = 0;
        for (NativeMemory.Block table : tables) {
            table.free();
            cache.budget.release(table.segment().byteSize());
        }
        for (long id : extentIds) {
            cache.large.free(id);
        }
    }

    /** Share of the log's pages that live records fill. */
    private double liveShare() {
        long allocated = store.allocatedBytes();
        if (allocated == 0) {
            return 1.0;
        }
        long live = 0;
        for (IndexShard shard : cache.shards) {
            live += shard.liveBytes();
        }
        return (double) live / allocated;
    }
}
