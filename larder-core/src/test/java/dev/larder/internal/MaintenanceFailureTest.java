package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.Ticker;
import java.time.Duration;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Maintenance that fails: a pass that throws is counted and logged, never handed to whoever
 * hosted it (a writer whose put is done, a reader, or the executor, which would drop it unseen),
 * and the next pass starts over.
 */
@NoHiddenFailures.Expected
class MaintenanceFailureTest {
    private static final int BUDGET = 4 << 20;

    private static byte[] value(int i) {
        byte[] v = new byte[200];
        v[0] = (byte) i;
        return v;
    }

    /** A maintenance pass's injected fault. */
    private static void fail() {
        throw new IllegalStateException("injected maintenance fault");
    }

    /** A ticker moved by hand that throws while {@code failing}. */
    private static final class FailingTicker implements Ticker {
        final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);
        volatile boolean failing;

        @Override
        public long read() {
            if (failing) {
                throw new IllegalStateException("clock unavailable");
            }
            return nanos.get();
        }
    }

    /**
     * The ticker is user code that maintenance calls (to expire pages, to judge a victim's
     * deadline). While it throws, plain puts (which never read it) run the routine on their
     * thread: they once threw its exception after their write was done. Now expiry waits for a
     * good reading and nothing else stops.
     */
    @Test
    void aTickerThatThrowsDuringMaintenanceDelaysExpiryAndFailsNoWrite() {
        FailingTicker ticker = new FailingTicker();
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .ticker(ticker)
                .executor(Runnable::run)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            for (int i = 0; i < 1_000; i++) {
                cache.put(i, value(i), Duration.ofMinutes(1));
            }
            ticker.failing = true;
            ticker.nanos.addAndGet(Duration.ofMinutes(2).toNanos()); // all 1,000 are due
            for (int i = 1_000; i < 6_000; i++) {
                cache.put(i, value(i)); // no expiry: the put itself never reads the ticker
            }
            assertThat(nc.tickerFailures()).as("failed readings").isPositive();
            assertThat(cache.stats().survivedFailureCount()).isEqualTo(nc.tickerFailures());
            assertThat(cache.stats().expirationCount())
                    .as("expired by the last good reading")
                    .isZero();
            assertThat(cache.size()).isEqualTo(6_000);

            ticker.failing = false;
            for (int i = 6_000; i < 7_000; i++) {
                cache.put(i, value(i));
            }
            cache.cleanUp();
            assertThat(cache.stats().expirationCount()).isEqualTo(1_000);
            assertThat(cache.size()).isEqualTo(6_000);
            for (int i = 1_000; i < 7_000; i++) {
                assertThat(cache.getIfPresent(i)).as("key %d", i).isEqualTo(value(i));
            }
            assertThat(nc.maintenanceFailures()).isZero();
        }
    }

    /**
     * Passes on the executor that throw: nothing reaches the executor (a pool would drop it, and
     * the cache would not know), each is counted, and later passes still evict there.
     */
    @Test
    void passesThatThrowOnTheExecutorAreCountedAndLaterOnesEvict() throws InterruptedException {
        Queue<Throwable> escaped = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "larder-maintenance"));
        Set<String> evictingThreads = ConcurrentHashMap.newKeySet();
        AtomicInteger faultsLeft = new AtomicInteger(5);
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .executor(task -> pool.execute(() -> {
                    try {
                        task.run();
                    } catch (Throwable t) {
                        escaped.add(t);
                        throw t;
                    }
                }))
                .removalListener((k, v, cause) ->
                        evictingThreads.add(Thread.currentThread().getName()))
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            nc.passFault = () -> {
                if (faultsLeft.getAndDecrement() > 0) {
                    fail();
                }
            };
            for (int i = 0; i < 200_000; i++) {
                cache.put(i, value(i));
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(BUDGET);
            }
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            assertThat(escaped).as("exceptions that reached the executor").isEmpty();
            assertThat(nc.maintenanceFailures()).isEqualTo(5);
            assertThat(cache.stats().survivedFailureCount()).isEqualTo(5);
            assertThat(evictingThreads).as("threads that evicted").contains("larder-maintenance");
            assertThat(cache.getIfPresent(199_999)).isEqualTo(value(199_999));
        }
    }

    /**
     * Passes a writer or reader hosts that throw every time: their calls succeed, the bounds hold
     * (eviction a write needs is not a routine pass: it still runs), and once the fault is gone
     * the routine catches up.
     */
    @Test
    void passesThatAlwaysThrowFailNoCallerAndCostNoBound() {
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .maximumEntries(5_000)
                .executor(Runnable::run)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            nc.passFault = MaintenanceFailureTest::fail;
            for (int i = 0; i < 50_000; i++) {
                cache.put(i, value(i));
                if (i % 7 == 0) {
                    cache.getIfPresent(i - 3); // reads drain now and then
                }
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(BUDGET);
            }
            long failed = nc.maintenanceFailures();
            assertThat(failed).as("failed passes").isGreaterThan(100);
            assertThat(cache.size()).isBetween(4_900L, 5_000L + Evictor.entrySlack(5_000));
            assertThat(cache.getIfPresent(49_999)).isEqualTo(value(49_999));

            nc.passFault = null;
            cache.cleanUp();
            assertThat(cache.size()).isLessThanOrEqualTo(5_000);
            for (int i = 0; i < 1_000; i++) {
                cache.put(100_000 + i, value(i));
            }
            assertThat(nc.maintenanceFailures()).isEqualTo(failed);
        }
    }

    /** A partitioned cache's stats add up its partitions' failures. */
    @Test
    void aPartitionedCacheCountsEveryPartitionsFailures() {
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .partitions(2)
                .executor(Runnable::run)
                .build()) {
            PartitionedCache<?, ?> partitioned = (PartitionedCache<?, ?>) cache;
            for (int p = 0; p < 2; p++) {
                partitioned.partitionAt(p).passFault = MaintenanceFailureTest::fail;
            }
            for (int i = 0; i < 5_000; i++) {
                cache.put(i, value(i));
            }
            long first = partitioned.partitionAt(0).maintenanceFailures();
            long second = partitioned.partitionAt(1).maintenanceFailures();
            assertThat(first).isPositive();
            assertThat(second).isPositive();
            assertThat(cache.stats().survivedFailureCount()).isEqualTo(first + second);
        }
    }
}
