package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderBuilder;
import dev.larder.LarderCache;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The entry bound's slack: while one thread evicts, others may insert past {@code
 * maximumEntries} by up to the slack instead of waiting; past the slack they wait; maintenance
 * and cleanUp bring the count back under the bound.
 */
@Timeout(120)
class EntrySlackTest {
    private static final byte[] VALUE = {1, 2, 3, 4};

    private static LarderCache<Long, byte[]> cache(long maximumEntries, Executor executor) {
        return builder(maximumEntries, executor).build();
    }

    private static LarderBuilder<Long, byte[]> builder(long maximumEntries, Executor executor) {
        return Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(256L << 20)
                .maximumEntries(maximumEntries)
                .executor(executor);
    }

    @Test
    void theSlackIsAFiveHundredTwelfthOfTheBoundFromFourThousandNinetySixEntries() {
        assertThat(Evictor.entrySlack(4_095)).isZero();
        assertThat(Evictor.entrySlack(4_096)).isEqualTo(8);
        assertThat(Evictor.entrySlack(1_000_000)).isEqualTo(1_953);
        assertThat(Evictor.entrySlack(1L << 40)).isEqualTo(4_096);
        assertThat(Evictor.entrySlack(Long.MAX_VALUE)).isZero(); // no entry bound
    }

    @Test
    void aSingleWriterWithMaintenanceOnItsThreadNeverPassesTheBound() {
        int max = 10_000;
        try (LarderCache<Long, byte[]> cache = cache(max, Runnable::run)) {
            for (long k = 0; k < 50_000; k++) {
                cache.put(k, VALUE);
                assertThat(cache.size()).isLessThanOrEqualTo(max);
            }
            assertThat(cache.size()).isGreaterThan(max - 32); // at most an eviction batch below
            // The evictor subtracts its removals from the count in batches: none is left out.
            assertThat(cache.size()).isEqualTo(present(cache, 0, 50_000));
        }
    }

    /** How many of the keys {@code [from, to)} the cache holds. */
    private static long present(LarderCache<Long, byte[]> cache, long from, long to) {
        long n = 0;
        for (long k = from; k < to; k++) {
            if (cache.containsKey(k)) {
                n++;
            }
        }
        return n;
    }

    /**
     * One writer on a machine with a core to spare hands its batches to the executor's thread,
     * which lingers for the next one and starts it before the count reaches the bound: the count
     * never passes the slack, the cache ends at most a batch and a half below its bound (evicting
     * ahead takes half a batch more, not more batches), and every eviction is one key gone.
     */
    @Test
    void aWriterWhoseBatchesRunOnTheExecutorsThreadStaysWithinTheSlackAndAlmostFull() throws InterruptedException {
        int max = 10_000;
        long slack = Evictor.entrySlack(max);
        int batch = Evictor.entryBatch(max);
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (LarderCache<Long, byte[]> cache = cache(max, executor)) {
            long inserts = 200_000;
            for (long k = 0; k < inserts; k++) {
                cache.put(k, VALUE);
                assertThat(cache.size()).isLessThanOrEqualTo(max + slack);
            }
            cache.cleanUp();
            long size = cache.size();
            assertThat(size).isBetween(max - batch - (long) batch / 2, (long) max);
            // Ahead of the bound only while a writer inserts: a quiet cache keeps what it holds.
            Thread.sleep(20);
            assertThat(cache.size()).isEqualTo(size);
            assertThat(size).isEqualTo(present(cache, 0, inserts));
            assertThat(cache.stats().evictionCount()).isEqualTo(inserts - size);
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * The executor's pass ahead of the bound evicts only on a look at the count taken since the
     * last cleanUp: a lingering task that judged the count before a cleanUp, and ran its pass
     * after it (its thread descheduled in between), evicted a quiet partition below its bound
     * (CI, session 63). Here the pass runs on the test's thread with a look from either side.
     */
    @Test
    void aPassAheadOfTheBoundOnALookFromBeforeACleanUpEvictsNothing() {
        int max = 10_000;
        int batch = Evictor.entryBatch(max);
        try (LarderCache<Long, byte[]> cache = cache(max, Runnable::run)) {
            long n = max - batch / 2 + 2; // within the margin ahead of the bound, below it
            for (long k = 0; k < n; k++) {
                cache.put(k, VALUE);
            }
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            int before = nc.cleanUps();
            cache.cleanUp();
            nc.evictAheadOfTheBound(before);
            assertThat(cache.stats().evictionCount())
                    .as("a look from before the cleanUp")
                    .isZero();
            assertThat(cache.size()).isEqualTo(n);

            nc.evictAheadOfTheBound(nc.cleanUps());
            assertThat(cache.stats().evictionCount())
                    .as("a look since: the pass evicts ahead, down a batch below the bound")
                    .isEqualTo(n - (max - batch));
            assertThat(cache.size()).isEqualTo(max - batch);
        }
    }

    /**
     * An executor that costs each caller handing it a task more than the batches the task then
     * runs (a 20 ms stall here, where a wake that put the woken thread on the writer's core cost
     * ~75 µs against a batch's few) is not woken for the batches: the writer evicts most of them
     * itself and hands one over only to measure again. Woken for each of them, the executor
     * evicted nearly all, a task's up to 64 batches per stall.
     */
    @Test
    void aWriterEvictsItsOwnBatchesWhileWakingTheExecutorCostsItMore() throws InterruptedException {
        int max = 10_000;
        ExecutorService worker = Executors.newSingleThreadExecutor();
        AtomicLong handOffs = new AtomicLong();
        Executor costly = task -> {
            handOffs.incrementAndGet();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            worker.execute(task);
        };
        Thread writer = Thread.currentThread();
        AtomicLong byWriter = new AtomicLong();
        AtomicLong byOthers = new AtomicLong();
        try (LarderCache<Long, byte[]> cache = builder(max, costly)
                .removalListener(
                        (k, v, cause) -> (Thread.currentThread() == writer ? byWriter : byOthers).incrementAndGet())
                .build()) {
            long inserts = 200_000;
            for (long k = 0; k < inserts; k++) {
                cache.put(k, VALUE);
            }
            cache.cleanUp();
            long evicted = cache.stats().evictionCount();
            assertThat(evicted).isEqualTo(inserts - cache.size());
            assertThat(byWriter.get() + byOthers.get()).isEqualTo(evicted);
            if (Runtime.getRuntime().availableProcessors() > 1) { // else nothing is handed off at all
                assertThat(byWriter.get()).isGreaterThan(evicted / 2);
                long batches = evicted / Evictor.entryBatch(max);
                assertThat(handOffs.get()).isLessThan(batches / HandOffCosts.PROBE_EVERY * 2 + 16);
            }
        } finally {
            worker.shutdownNow();
        }
    }

    @Test
    void whileAnotherThreadHoldsMaintenanceInsertsGoOnThroughTheSlackThenWait() throws Exception {
        int max = 10_000;
        long slack = Evictor.entrySlack(max);
        try (LarderCache<Long, byte[]> cache = cache(max, Runnable::run)) {
            for (long k = 0; k < max; k++) {
                cache.put(k, VALUE);
            }
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> {
                nc.maintenanceLock.lock();
                try {
                    held.countDown();
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    nc.maintenanceLock.unlock();
                }
            });
            held.await();
            long before = cache.size();
            for (long k = max; k < max + slack + (max - before); k++) {
                cache.put(k, VALUE); // returns at once: the slack takes it
            }
            assertThat(cache.size()).isEqualTo(max + slack);
            // One more must evict first, and waits for the holder.
            AtomicBoolean done = new AtomicBoolean();
            Thread writer = Thread.ofPlatform().start(() -> {
                cache.put(-1L, VALUE);
                done.set(true);
            });
            try {
                writer.join(200);
                assertThat(done).isFalse();
                assertThat(cache.size())
                        .as("the waiting writer did not pass the slack")
                        .isEqualTo(max + slack);
            } finally {
                release.countDown(); // also when an assertion failed: the threads must end
            }
            writer.join();
            holder.join();
            assertThat(done).isTrue();
            assertThat(cache.size()).isLessThanOrEqualTo(max);
            assertThat(cache.getIfPresent(-1L)).isNotNull(); // the newest entry is in the window
        }
    }

    @Test
    void concurrentInsertersStayWithinTheSlackAndCleanUpRestoresTheBound() throws Exception {
        int max = 10_000;
        long slack = Evictor.entrySlack(max);
        int writers = 3;
        try (LarderCache<Long, byte[]> cache = cache(max, ForkJoinPool.commonPool())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong highest = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long first = w * 1_000_000L;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        for (long k = first; k < first + 200_000; k++) {
                            cache.put(k, VALUE);
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            Thread monitor = Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    highest.accumulateAndGet(cache.size(), Math::max);
                }
            });
            for (Thread t : threads) {
                t.join();
            }
            stop.set(true);
            monitor.join();
            assertThat(failure.get()).isNull();
            assertThat(highest.get()).isLessThanOrEqualTo(max + slack);
            cache.cleanUp();
            assertThat(cache.size()).isLessThanOrEqualTo(max).isGreaterThan(max - 64);
            // The count is exact once maintenance is done (the evictor subtracts its removals
            // in batches). A pass the pool still runs may evict between the two looks: look again.
            long size;
            long held;
            int looks = 0;
            do {
                cache.cleanUp();
                size = cache.size();
                held = 0;
                for (int w = 0; w < writers; w++) {
                    held += present(cache, w * 1_000_000L, w * 1_000_000L + 200_000);
                }
            } while (size != held && ++looks < 5);
            assertThat(size).isEqualTo(held);
        }
    }
}
