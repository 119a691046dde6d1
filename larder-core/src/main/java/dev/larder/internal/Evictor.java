package dev.larder.internal;

import dev.larder.RemovalCause;
import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.index.IndexShard;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
    /** Compact rather than evict while live records fill less than this share of the log. */
    static final double COMPACT_BELOW = 0.75;
    /** How long eviction waits for a writer that reserved the oldest record to install it. */
    static final long WAIT_LIMIT_NANOS = 10_000_000_000L;

    private static final ValueLayout.OfLong EXTENT_ID = ValueLayout.JAVA_LONG_UNALIGNED;

    private final NativeCache<?, ?> cache;
    private final PageStore store;
    private final RecordLayout.Header header = new RecordLayout.Header();
    private int page = -1;
    private long offset;
    private int[] retired = new int[8];
    private int retiredCount;
    private List<Removal> removals = new ArrayList<>();

    Evictor(NativeCache<?, ?> cache) {
        this.cache = cache;
        this.store = cache.store;
    }

    /** Evicts until {@code goal} holds. Returns false if nothing more can be reclaimed. */
    boolean makeRoom(Goal goal, long bytes) {
        int reinsertions = 0;
        boolean compact = goal != Goal.ENTRY && liveShare() < COMPACT_BELOW;
        long waitingSince = 0;
        for (int steps = 0; steps < MAX_STEPS; ) {
            if (met(goal, bytes)) {
                return true;
            }
            if (retiredCount > 0 && goal != Goal.ENTRY) {
                reclaim();
                continue;
            }
            Step step = step(true, reinsertions < MAX_REINSERTIONS, compact);
            if (step == Step.WAITING) {
                // A writer is between reserving a record and installing it: give it the CPU.
                long now = System.nanoTime();
                if (waitingSince == 0) {
                    waitingSince = now;
                } else if (now - waitingSince > WAIT_LIMIT_NANOS) {
                    return false;
                }
                Thread.yield();
                continue;
            }
            waitingSince = 0;
            steps++;
            if (step == Step.REINSERTED) {
                reinsertions++;
            } else if (step == Step.EVICTED) {
                reinsertions = 0;
            } else if (step == Step.NOTHING) {
                if (retiredCount > 0 || cache.large.hasRetired() || cache.hasRetiredTables()) {
                    reclaim();
                    continue;
                }
                return met(goal, bytes);
            }
        }
        reclaim();
        return met(goal, bytes);
    }

    private boolean met(Goal goal, long bytes) {
        return switch (goal) {
            case PAGE -> store.writerCanTakePage();
            case BYTES -> store.releaseFreePages(bytes);
            case ENTRY -> cache.entries.get() < cache.maximumEntries;
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
        if (!store.writerCanTakePage()) {
            makeRoom(Goal.PAGE, 0);
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
        if (offset >= limit) {
            if (!store.isSealed(page)) {
                if (!evict) {
                    return Step.NOTHING;
                }
                store.sealActive(page);
                return Step.WAITING; // look again at the sealed top
            }
            if (offset < store.limit(page)) {
                return Step.WAITING; // sealed with more records than we saw
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
        RecordLayout.Header h = header.parse(segment, offset, limit);
        long location = store.location(page, offset);
        long recordEnd = h.end;
        Step result = judge(location, segment, h, evict, mayReinsert, compact);
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
        Object key = null;
        Object value = null;
        RemovalCause cause;
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
                    return secondChance ? Step.REINSERTED : Step.DROPPED_DEAD_OR_EXPIRED;
                }
            }
            cause = expired ? RemovalCause.EXPIRED : RemovalCause.SIZE;
            shard.removeAt(slot, recordBytes);
            cache.entries.decrementAndGet();
            if (cache.listener != null) {
                key = cache.decodeKey(location, h);
                value = cache.decodeValue(location, h);
            }
            if (h.large()) {
                cache.large.retire(segment.get(EXTENT_ID, h.valueOffset));
            }
        } finally {
            shard.lock.unlock();
        }
        if (cause == RemovalCause.EXPIRED) {
            cache.stats.expirations.increment();
        } else {
            cache.stats.evictions.increment();
        }
        if (cache.listener != null) {
            removals.add(new Removal(key, value, cause));
        }
        return cause == RemovalCause.EXPIRED ? Step.DROPPED_DEAD_OR_EXPIRED : Step.EVICTED;
    }

    /**
     * Reclaims up to {@code maxPages} sealed pages whose every record has expired, wherever they
     * are in the log: each record is judged as at the oldest end (expired ones removed, any that
     * a reader extended copied forward), then the page leaves the log and is retired. Work is
     * proportional to the expired records, never to the live ones.
     */
    private void expirePages(int maxPages) {
        for (int n = 0; n < maxPages; n++) {
            long now = cache.ticker.read();
            int expired = store.pollExpiredPage(now);
            if (expired < 0) {
                return;
            }
            if (expired == page) {
                continue; // the cursor is in it; the FIFO walk reclaims it
            }
            MemorySegment segment = store.pageById(expired);
            long top = store.sealedTop(expired);
            RecordLayout.Header h = new RecordLayout.Header();
            boolean undecided = false;
            for (long at = 0; at < top; at = h.end) {
                if ((RecordLayout.layout(segment, at) & RecordLayout.DECIDED) == 0) {
                    undecided = true; // a writer is still installing: look again shortly
                    break;
                }
                h.parse(segment, at, top);
                long end = h.end;
                judge(store.location(expired, at), segment, h, true, false, true);
                h.end = end;
            }
            if (undecided) {
                store.requeueExpiring(expired, now + 1_000_000);
                return;
            }
            store.removeFromLog(expired);
            retire(expired);
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
        } else {
            store.noteImmortal(target);
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
