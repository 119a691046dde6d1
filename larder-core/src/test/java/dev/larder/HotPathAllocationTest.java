package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.testing.AllocationCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Puts allocate nothing on the calling thread, maintenance included (an inline executor runs
 * it there): inserts that evict, and overwrites. The keys are boxed before the measured rounds.
 * JMH's {@code -prof gc} measures the same on the benchmarks; this catches a regression in the
 * test suite, where a stray iterator or lambda would otherwise go unseen until the next run.
 */
class HotPathAllocationTest {
    private static final int ROUND = 50_000;
    private static final int ROUNDS = 8;
    /** Far below one byte per put: a stray object every few hundred puts would pass it. */
    private static final long ALLOWED = 1024;

    /**
     * A cache filling without {@code expectedEntries} grows its index shard by shard, rehashing
     * every key from its record. Each growth step allocates a few objects for its native block;
     * rehashing a key must allocate nothing (a header per key was 32 bytes, ~4 times per insert).
     */
    @Test
    void indexGrowthAllocatesNothingPerKey() {
        int entries = 100_000;
        Long[] keys = new Long[entries];
        for (int i = 0; i < entries; i++) {
            keys[i] = (long) i;
        }
        byte[] value = new byte[16];
        AllocationCounter counter = AllocationCounter.create();
        long bytes = counter.fewestBytes(() -> {
            try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                    .maximumBytes(64L << 20)
                    .concurrencyLevel(64) // growth steps per shard: the same count on any machine
                    .executor(Runnable::run)
                    .build()) {
                for (Long key : keys) {
                    cache.put(key, value);
                }
            }
        });
        assertThat(bytes)
                .as("bytes allocated filling a growing cache with %,d entries (growth steps, build, close)", entries)
                .isLessThan(entries * 8L);
    }

    /**
     * One cache, and one of four partitions (each call routed by the key's hash; 10,000 entries
     * each, so that each has the entry slack a default partition has).
     */
    @ParameterizedTest(name = "{0} partition(s) of {1} entries")
    @CsvSource({"1, 10000", "4, 40000"})
    void insertsThatEvictOverwritesAndLookupsAllocateNothing(int partitions, int max) {
        Long[] keys = new Long[ROUNDS * ROUND];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (long) i;
        }
        byte[] value = new byte[64];
        // A budget the log fills within the warm-up: until it does, each new page allocates its
        // handle (a page of records, once).
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(16L << 20)
                .maximumEntries(max)
                .partitions(partitions)
                .executor(Runnable::run)
                .build()) {
            AllocationCounter counter = AllocationCounter.create();
            int[] round = {0};
            Runnable insertRound = () -> {
                int from = (round[0]++ % ROUNDS) * ROUND;
                for (int i = from; i < from + ROUND; i++) {
                    cache.put(keys[i], value);
                }
            };
            Runnable overwriteRound = () -> {
                for (int i = 0; i < ROUND; i++) {
                    cache.put(keys[keys.length - 1 - (i % max)], value);
                }
            };
            // The interpreter and C1 allocate what C2 scalar-replaces, and a log still taking new
            // pages allocates each one's handle (~1 KB per round while four partitions' logs
            // grew): warm up until the memory in use stops growing.
            long used = -1;
            for (int warmUp = 0; warmUp < 40 && (warmUp < 3 || cache.memoryUsed() > used); warmUp++) {
                used = cache.memoryUsed();
                insertRound.run();
                overwriteRound.run();
            }
            long inserts = counter.fewestBytes(insertRound);
            assertThat(cache.stats().evictionCount()).isPositive();
            long overwrites = counter.fewestBytes(overwriteRound);
            int[] present = {0};
            long lookups = counter.fewestBytes(() -> {
                for (int i = 0; i < ROUND; i++) {
                    if (cache.containsKey(keys[i])) {
                        present[0]++;
                    }
                }
            });
            assertThat(inserts)
                    .as("bytes allocated by %,d inserts into a full cache", ROUND)
                    .isLessThan(ALLOWED);
            assertThat(lookups).as("bytes allocated by %,d lookups", ROUND).isLessThan(ALLOWED);
            assertThat(overwrites)
                    .as("bytes allocated by %,d overwrites", ROUND)
                    .isLessThan(ALLOWED);
        }
    }
}
