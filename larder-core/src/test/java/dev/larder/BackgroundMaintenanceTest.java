package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Maintenance on the cache's executor: eviction between the watermarks, off the writer's thread. */
class BackgroundMaintenanceTest {
    private static final int BUDGET = 4 << 20;

    private static byte[] value(int i) {
        byte[] v = new byte[200];
        v[0] = (byte) i;
        return v;
    }

    @Test
    void evictionRunsOnTheExecutorBeforeWritersRunOutOfPages() throws InterruptedException {
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "larder-maintenance"));
        Set<String> evictingThreads = ConcurrentHashMap.newKeySet();
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .executor(executor)
                .removalListener((k, v, cause) -> {
                    if (cause == RemovalCause.SIZE) {
                        evictingThreads.add(Thread.currentThread().getName());
                    }
                })
                .build()) {
            for (int i = 0; i < 200_000; i++) {
                cache.put(i, value(i));
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(BUDGET);
            }
            executor.shutdown();
            assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            assertThat(cache.stats().evictionCount()).isGreaterThan(100_000);
            assertThat(evictingThreads).as("threads that evicted").contains("larder-maintenance");
        }
    }

    @Test
    void anExecutorThatNeverRunsTheTaskCostsNoBoundAndNoEntry() {
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Integer, byte[]> cache = boundTo5000EntriesOn(parked)) {
            // Past the bound a writer hands the eviction to the executor and goes on, up to the
            // slack (1/512 of the bound: LarderBuilder.maximumEntries), where it evicts itself.
            long slack = 5_000 / 512;
            for (int i = 0; i < 50_000; i++) {
                cache.put(i, value(i));
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(BUDGET);
                assertThat(cache.size()).isLessThanOrEqualTo(5_000 + slack);
            }
            // Writers evicted at the high watermark themselves; at most one task was ever pending.
            assertThat(parked).hasSizeLessThanOrEqualTo(1);
            assertThat(cache.size()).isGreaterThan(4_900);
            for (int i = 49_990; i < 50_000; i++) { // still in the admission window
                assertThat(cache.getIfPresent(i)).as("recent key %d", i).isNotNull();
            }
            parked.forEach(Runnable::run); // late: still safe
            assertThat(cache.size()).isLessThanOrEqualTo(5_000);
        }
    }

    @Test
    void aWriterPastTheEntryBoundLeavesTheBatchToTheExecutor() {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "on one core a writer evicts the batch itself");
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Integer, byte[]> cache = boundTo5000EntriesOn(parked)) {
            for (int i = 0; i < 5_003; i++) {
                cache.put(i, value(i));
            }
            // Three past the bound, within the slack (9 at 5,000): the writer went on, and the
            // batch waits for the executor's one task.
            assertThat(cache.size()).isEqualTo(5_003);
            assertThat(cache.stats().evictionCount()).isZero();
            assertThat(parked).hasSize(1);
            parked.remove(0).run();
            assertThat(cache.size()).isLessThanOrEqualTo(5_000);
            assertThat(cache.stats().evictionCount()).isGreaterThanOrEqualTo(3);
            for (int i = 0; i < 5_003; i++) { // the writer's puts all landed; only evicted keys are gone
                byte[] v = cache.getIfPresent(i);
                if (v != null) {
                    assertThat(v[0]).isEqualTo((byte) i);
                }
            }
        }
    }

    @Test
    void aRejectingExecutorLeavesEvictionToWriters() {
        try (LarderCache<Integer, byte[]> cache = Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .executor(task -> {
                    throw new RejectedExecutionException("shut down");
                })
                .build()) {
            for (int i = 0; i < 100_000; i++) {
                cache.put(i, value(i));
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(BUDGET);
            }
            assertThat(cache.stats().evictionCount()).isPositive();
            assertThat(cache.getIfPresent(99_999)).isNotNull();
        }
    }

    /** A cache of 5,000 entries at most whose executor only keeps the tasks it is handed. */
    private static LarderCache<Integer, byte[]> boundTo5000EntriesOn(List<Runnable> parked) {
        return Larder.newBuilder(Codecs.ints(), Codecs.bytes())
                .maximumBytes(BUDGET)
                .maximumEntries(5_000)
                .executor(parked::add)
                .build();
    }
}
