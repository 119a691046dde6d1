package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code ChurnBenchmark} must measure what it says: each operation inserts a key new to the cache
 * and removes the key the same thread inserted {@code size} operations before, so the cache
 * stays at its bound and every thread's removals hit.
 */
class ChurnBenchmarkTest {
    private static final int SIZE = 100_000; // partitioned by default on two cores or more

    @Test
    void twoThreadsInsertNewKeysAndRemoveTheirOwnOldOnesKeepingTheCacheAtItsBound() {
        ChurnBenchmark bench = new ChurnBenchmark();
        bench.size = SIZE;
        bench.valueSize = 256;
        bench.setUp();
        try {
            ChurnBenchmark.ThreadState[] threads = {new ChurnBenchmark.ThreadState(), new ChurnBenchmark.ThreadState()};
            for (int t = 0; t < threads.length; t++) {
                threads[t].init(bench, t, threads.length);
            }
            long removalsBefore = bench.cache.cache.stats().removalCount();
            int ops = 3 * SIZE;
            for (int i = 0; i < ops; i++) {
                ChurnBenchmark.ThreadState t = threads[i % 2];
                String inserted = bench.keys[t.next];
                assertThat(bench.cache.cache.containsKey(inserted))
                        .as("a new key: %s", inserted)
                        .isFalse();
                bench.insertAndRemove(t);
                assertThat(bench.cache.cache.containsKey(inserted)).as(inserted).isTrue();
            }
            // One thread on a machine of more cores hands eviction past the bound to the
            // executor, whose pass subtracts its evictions from the entry count only at its end:
            // size() is exact once no pass is in flight, and cleanUp() waits for the one that is.
            bench.cache.cache.cleanUp();
            long removals = bench.cache.cache.stats().removalCount() - removalsBefore;
            long evictions = bench.cache.cache.stats().evictionCount();
            // Every key that left was removed or evicted; almost every removal found its key (a
            // miss is a key the cache evicted first), and the cache stayed at its bound.
            assertThat(bench.cache.cache.size())
                    .isEqualTo(SIZE + ops - removals - evictions)
                    .isLessThanOrEqualTo(SIZE);
            assertThat(removals).isGreaterThan(ops * 9L / 10);
        } finally {
            bench.tearDown();
        }
    }
}
