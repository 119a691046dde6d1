package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.internal.memory.PageStore;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Pages of main moved whole ({@code Evictor.movePageWhole}): after a phase in which every entry
 * was read, evictions move pages rather than copy records, and nothing stored is lost, changed or
 * miscounted.
 */
class PageMoveTest {
    private static final int VALUE_BYTES = 200;

    private static LarderCache<Long, byte[]> cache(int entries) {
        return Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(entries * 600L)
                .maximumEntries(entries)
                .executor(Runnable::run)
                .build();
    }

    /** A value that names its key and version, so a value under the wrong key shows. */
    private static byte[] value(long key, int version) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES);
        while (b.remaining() >= 12) {
            b.putLong(key).putInt(version);
        }
        return b.array();
    }

    private static long keyOf(byte[] value) {
        return ByteBuffer.wrap(value).getLong(0);
    }

    private static NativeCache<?, ?> nc(LarderCache<Long, byte[]> cache) {
        return (NativeCache<?, ?>) cache;
    }

    /** Keys [0, entries) put, then each read once: every record's access count set. */
    private static void fillAndReadEverything(LarderCache<Long, byte[]> cache, int entries) {
        for (long k = 0; k < entries; k++) {
            cache.put(k, value(k, 0));
        }
        for (long k = 0; k < entries; k++) {
            assertThat(cache.getIfPresent(k)).isNotNull();
        }
    }

    @Test
    void aCacheWhoseEveryEntryWasReadMovesPagesInsteadOfCopyingTheirRecords() {
        int entries = 20_000;
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            NativeCache<?, ?> nc = nc(cache);
            fillAndReadEverything(cache, entries);
            long evictionsBefore = cache.stats().evictionCount();
            for (long k = entries; k < entries + 5_000; k++) {
                cache.put(k, value(k, 0));
            }
            cache.cleanUp();
            assertThat(cache.stats().evictionCount() - evictionsBefore).isGreaterThan(4_000);
            assertThat(nc.evictor.pagesMovedWhole())
                    .as("pages moved whole after every entry was read")
                    .isGreaterThan(10);
            // Promotions moved pages to protected: most of the first keys are there, not copied.
            long[] byQueue = QueueRecount.byQueue(nc);
            assertThat(byQueue[PageStore.PROTECTED]).isGreaterThan(entries / 2);
            assertThat(nc.queues.protectedEntries()).isEqualTo(byQueue[PageStore.PROTECTED]);
            assertThat(nc.evictor.windowEntries()).isEqualTo(byQueue[PageStore.WINDOW]);
            assertThat(byQueue[0] + byQueue[1] + byQueue[2]).isEqualTo(cache.size());
            for (long k = 0; k < entries + 5_000; k++) {
                byte[] v = cache.getIfPresent(k);
                if (v != null) {
                    assertThat(v).isEqualTo(value(k, 0));
                }
            }
        }
    }

    @Test
    void withoutReadsNoPageOfMainMovesAndTheWindowsPagesDuelRecordByRecord() {
        int entries = 20_000;
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            Evictor evictor = nc(cache).evictor;
            for (long k = 0; k < entries; k++) {
                cache.put(k, value(k, 0));
            }
            cache.cleanUp();
            // While the cache filled, the window's overflow went to main unopposed, by pages.
            long filling = evictor.windowPagesMovedWhole();
            assertThat(filling).isGreaterThan(10);
            for (long k = entries; k < entries + 10_000; k++) {
                cache.put(k, value(k, 0));
            }
            cache.cleanUp();
            assertThat(evictor.pagesMovedWhole() - evictor.windowPagesMovedWhole())
                    .as("pages of main moved")
                    .isZero();
            assertThat(evictor.windowPagesMovedWhole())
                    .as("a full cache's new records duel main's victim one by one")
                    .isEqualTo(filling);
        }
    }

    /**
     * A full cache whose values change length at every overwrite appends a record per put;
     * compaction then sends the window's pages to main whole instead of copying each record (a
     * copy per put, on top of compaction's own). Against a map, with removals and conditional
     * puts that abandon their record (dead bytes no index word ever pointed to, which a page
     * moved whole must not count as live): every value is the last one put, the queue counts
     * match where the records are, and no entry is evicted while compaction can free pages.
     */
    @Test
    void compactionMovesTheWindowsPagesToMainWholeAndLosesNothing() {
        int entries = 4_000;
        SplittableRandom random = new SplittableRandom(7);
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            NativeCache<?, ?> nc = nc(cache);
            Map<Long, byte[]> model = new HashMap<>();
            for (long k = 0; k < entries; k++) {
                byte[] v = value(k, 0);
                cache.put(k, v);
                model.put(k, v);
            }
            long movedBefore = nc.evictor.windowPagesMovedWhole();
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 4_000; i++) {
                    long k = random.nextInt(entries);
                    int op = random.nextInt(20);
                    byte[] v = Arrays.copyOf(value(k, round * 4_000 + i), VALUE_BYTES - 48 + 16 * random.nextInt(7));
                    if (op == 0) {
                        cache.remove(k);
                        model.remove(k);
                    } else if (op == 1) {
                        assertThat(cache.putIfAbsent(k, v)).isEqualTo(!model.containsKey(k));
                        model.putIfAbsent(k, v);
                    } else {
                        cache.put(k, v);
                        model.put(k, v);
                    }
                }
                cache.cleanUp();
                assertQueueCountsMatchTheIndex(nc, "round " + round);
                assertThat(cache.size()).isEqualTo(model.size());
            }
            assertThat(cache.stats().evictionCount()).as("compaction kept up").isZero();
            assertThat(nc.evictor.windowPagesMovedWhole() - movedBefore).isGreaterThan(50);
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                assertThat(cache.getIfPresent(e.getKey()))
                        .as("key %d", e.getKey())
                        .isEqualTo(e.getValue());
            }
        }
    }

    /**
     * Against a map: phases of reading everything (which make whole pages movable), inserts,
     * overwrites that change length (dead records on moved pages), and removals. A value present
     * is the last one put; the queue counts match where the records are.
     */
    @Test
    void pagesMovedWholeKeepEveryValueAndTheQueueCountsRight() {
        int entries = 8_000;
        SplittableRandom random = new SplittableRandom(42);
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            NativeCache<?, ?> nc = nc(cache);
            Map<Long, byte[]> model = new HashMap<>();
            long nextKey = 0;
            for (int round = 0; round < 30; round++) {
                for (int i = 0; i < 3_000; i++) {
                    int op = random.nextInt(10);
                    if (op < 6 || model.isEmpty()) {
                        long k = nextKey++;
                        byte[] v = value(k, 0);
                        cache.put(k, v);
                        model.put(k, v);
                    } else if (op < 9) {
                        long k = nextKey - 1 - random.nextInt((int) Math.min(nextKey, 3 * entries));
                        byte[] v = random.nextBoolean()
                                ? value(k, round)
                                : java.util.Arrays.copyOf(value(k, round), VALUE_BYTES + 24);
                        cache.put(k, v);
                        model.put(k, v);
                    } else {
                        long k = nextKey - 1 - random.nextInt((int) Math.min(nextKey, 3 * entries));
                        cache.remove(k);
                        model.remove(k);
                    }
                }
                // Every key read: each present record's access count set.
                for (long k = Math.max(0, nextKey - 3L * entries); k < nextKey; k++) {
                    byte[] v = cache.getIfPresent(k);
                    if (v != null) {
                        assertThat(v).as("key %d", k).isEqualTo(model.get(k));
                    }
                }
                cache.cleanUp();
                assertQueueCountsMatchTheIndex(nc, "round " + round);
                assertThat(cache.size()).isLessThanOrEqualTo(entries);
            }
            assertThat(nc.evictor.pagesMovedWhole()).isGreaterThan(0);
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                byte[] v = cache.getIfPresent(e.getKey());
                if (v != null) {
                    assertThat(v).isEqualTo(e.getValue());
                }
            }
        }
    }

    /**
     * Readers marking every record, a writer inserting (evicting, moving pages) and another
     * overwriting and removing, at once: every value read belongs to its key, nothing throws,
     * and the queue counts stay exact (a writer counts a record out of the queue its page is in
     * at that moment, read in the same atomic step as the page's count of records that left it).
     */
    @Test
    void pagesMoveWhileOtherThreadsReadOverwriteAndRemove() throws InterruptedException {
        int entries = 16_000;
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            NativeCache<?, ?> nc = nc(cache);
            fillAndReadEverything(cache, entries); // the inserter's evictions then move pages
            long inserts = 60_000;
            java.util.concurrent.atomic.AtomicLong inserted = new java.util.concurrent.atomic.AtomicLong(entries);
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            Runnable reader = () -> {
                while (!done.get()) {
                    long top = inserted.get();
                    for (long k = Math.max(0, top - entries); k < top; k++) {
                        byte[] v = cache.getIfPresent(k);
                        if (v != null && keyOf(v) != k) {
                            throw new AssertionError("key " + k + " read the value of key " + keyOf(v));
                        }
                    }
                }
            };
            Runnable inserter = () -> {
                try {
                    for (long k = entries; k < entries + inserts; k++) {
                        cache.put(k, value(k, 0));
                        inserted.set(k + 1);
                    }
                } finally {
                    done.set(true);
                }
            };
            Runnable changer = () -> {
                // From the inserter's 1,000th insert on (its first evictions have moved pages whole
                // by then), one change per 16 inserts: at full speed it left dead records on every
                // page of main before the evictions reached them, no page was live enough to move
                // whole, and the race this test is for did not happen.
                SplittableRandom random = new SplittableRandom(5);
                while (!done.get() && inserted.get() < entries + 1_000) {
                    Thread.onSpinWait();
                }
                long paced = inserted.get();
                while (!done.get()) {
                    long top = inserted.get();
                    if (top - paced < 16) {
                        Thread.onSpinWait();
                        continue;
                    }
                    paced = top;
                    long k = top - 1 - random.nextInt(entries);
                    if (random.nextInt(4) == 0) {
                        cache.remove(k);
                    } else {
                        cache.put(k, java.util.Arrays.copyOf(value(k, 1), VALUE_BYTES + random.nextInt(2) * 16));
                    }
                }
            };
            runTogether(reader, inserter, changer);
            cache.cleanUp();
            assertQueueCountsMatchTheIndex(nc, "after the run");
            assertThat(nc.evictor.pagesMovedWhole()).isGreaterThan(0);
            assertThat(cache.size()).isLessThanOrEqualTo(entries);
            for (long k = 0; k < entries + inserts; k++) {
                byte[] v = cache.getIfPresent(k);
                if (v != null) {
                    assertThat(keyOf(v)).isEqualTo(k);
                }
            }
        }
    }

    /**
     * Two writers changing lengths (each put appends, compaction moves the window's pages whole)
     * and a third removing and re-adding keys with conditional puts, at once, on a full cache:
     * every value read belongs to its key, the queue counts stay exact (a writer that removes or
     * replaces a record of a window page counts it out of that page, which may be moving to main
     * at that moment), and pages of the window did move.
     */
    @Test
    void theWindowsPagesMoveWhileWritersReplaceAndRemoveTheirRecords() throws InterruptedException {
        int entries = 6_000;
        try (LarderCache<Long, byte[]> cache = cache(entries)) {
            NativeCache<?, ?> nc = nc(cache);
            for (long k = 0; k < entries; k++) {
                cache.put(k, value(k, 0));
            }
            long movedBefore = nc.evictor.windowPagesMovedWhole();
            Runnable[] writers = new Runnable[3];
            for (int t = 0; t < writers.length; t++) {
                int id = t;
                writers[t] = () -> {
                    SplittableRandom random = new SplittableRandom(id);
                    for (int i = 0; i < 150_000; i++) {
                        long k = random.nextInt(entries);
                        byte[] v = Arrays.copyOf(value(k, i), VALUE_BYTES - 48 + 16 * random.nextInt(7));
                        if (id < 2) {
                            cache.put(k, v);
                        } else if (random.nextBoolean()) {
                            cache.remove(k);
                        } else {
                            cache.putIfAbsent(k, v);
                        }
                        byte[] read = cache.getIfPresent(random.nextInt(entries) + 0L);
                        if (read != null && keyOf(read) >= entries) {
                            throw new AssertionError("a value of no key: " + keyOf(read));
                        }
                    }
                };
            }
            runTogether(writers);
            cache.cleanUp();
            long[] byQueue = assertQueueCountsMatchTheIndex(nc, "after the run");
            assertThat(byQueue[0] + byQueue[1] + byQueue[2]).isEqualTo(cache.size());
            assertThat(nc.evictor.windowPagesMovedWhole() - movedBefore).isGreaterThan(20);
            for (long k = 0; k < entries; k++) {
                byte[] v = cache.getIfPresent(k);
                if (v != null) {
                    assertThat(keyOf(v)).isEqualTo(k);
                }
            }
        }
    }

    /** Runs each body on a thread of its own, all started at once; fails with the first failure. */
    private static void runTogether(Runnable... bodies) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        Thread[] threads = new Thread[bodies.length];
        for (int i = 0; i < bodies.length; i++) {
            threads[i] = new Thread(wrap(bodies[i], start, failure));
            threads[i].start();
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failure.get()).isNull();
    }

    /** The evictor's counts of the window and of protected against a recount from the index; returns the recount. */
    private static long[] assertQueueCountsMatchTheIndex(NativeCache<?, ?> nc, String when) {
        long[] byQueue = QueueRecount.byQueue(nc);
        assertThat(nc.evictor.windowEntries()).as("window, %s", when).isEqualTo(byQueue[PageStore.WINDOW]);
        assertThat(nc.queues.protectedEntries()).as("protected, %s", when).isEqualTo(byQueue[PageStore.PROTECTED]);
        return byQueue;
    }

    private static Runnable wrap(Runnable body, CountDownLatch start, AtomicReference<Throwable> failure) {
        return () -> {
            try {
                start.await();
                body.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        };
    }
}
