package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Puts and hits counted exactly while threads race on the same shards: puts are counted on the
 * shard under its lock, or on a stripe, and hits on a stripe, and no count may be lost or doubled.
 */
class ConcurrentStatsTest {
    private static final int THREADS = 4;
    private static final int OPS = 20_000;

    @Test
    void putsAndHitsAreCountedExactlyUnderRacingWriters() throws Exception {
        try (LarderCache<String, String> cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(LarderBuilder.MIN_MAXIMUM_BYTES * 8)
                .maximumEntries(2_000)
                .build()) {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    long puts = 0;
                    long hits = 0;
                    start.await();
                    for (int i = 0; i < OPS; i++) {
                        int op = random.nextInt(4);
                        if (op == 0) {
                            cache.put("new-" + thread + "-" + i, "v"); // an insert, evicting
                            puts++;
                        } else if (op == 1) {
                            // Shared keys, a value of the same or another length: rewritten in
                            // place under the shard's lock, or appended.
                            cache.put("shared-" + random.nextInt(500), "x".repeat(1 + random.nextInt(3)));
                            puts++;
                        } else if (cache.getIfPresent("shared-" + random.nextInt(500)) != null) {
                            hits++;
                        }
                    }
                    return new long[] {puts, hits};
                }));
            }
            long puts = 0;
            long hits = 0;
            for (Future<long[]> result : results) {
                long[] counted = result.get();
                puts += counted[0];
                hits += counted[1];
            }
            pool.shutdown();

            CacheStats stats = cache.stats();
            assertThat(stats.putCount()).as("puts").isEqualTo(puts);
            assertThat(stats.hitCount()).as("hits").isEqualTo(hits);
            assertThat(stats.hitCount() + stats.missCount()).as("lookups").isEqualTo((long) THREADS * OPS - puts);
        }
    }
}
