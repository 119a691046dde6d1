package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.testing.AllocationCounter;
import org.junit.jupiter.api.Test;

/**
 * Puts allocate nothing on the calling thread, maintenance included (an inline executor runs
 * it there): inserts that evict, and overwrites. The keys are boxed before the measured rounds.
 * JMH's {@code -prof gc} measures the same on the benchmarks; this catches a regression in the
 * test suite, where a stray iterator or lambda would otherwise go unseen until the next run.
 */
class HotPathAllocationTest {
    private static final int MAX = 10_000;
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

    @Test
    void insertsThatEvictAndOverwritesAllocateNothing() {
        Long[] keys = new Long[ROUNDS * ROUND];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (long) i;
        }
        byte[] value = new byte[64];
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .maximumEntries(MAX)
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
            for (int warmUp = 0; warmUp < 3; warmUp++) {
                insertRound.run(); // the interpreter and C1 allocate what C2 scalar-replaces
            }
            long inserts = counter.fewestBytes(insertRound);
            assertThat(cache.stats().evictionCount()).isPositive();
            long overwrites = counter.fewestBytes(() -> {
                for (int i = 0; i < ROUND; i++) {
                    cache.put(keys[keys.length - 1 - (i % MAX)], value);
                }
            });
            assertThat(inserts)
                    .as("bytes allocated by %,d inserts into a full cache", ROUND)
                    .isLessThan(ALLOWED);
            assertThat(overwrites)
                    .as("bytes allocated by %,d overwrites", ROUND)
                    .isLessThan(ALLOWED);
        }
    }
}
