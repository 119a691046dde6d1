package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.internal.memory.PageStore;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The W-TinyLFU policy through the public API: scan and flood resistance, loops, bounded work
 * per eviction, hit rate under two threads.
 */
class EvictionPolicyTest {
    private static final byte[] VALUE = {1};

    private static LarderCache<Long, byte[]> cache(int entries) {
        return Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .maximumEntries(entries)
                .build();
    }

    /** Read-through: a miss inserts the key. Returns whether it was a hit. */
    private static boolean access(LarderCache<Long, byte[]> cache, long key) {
        if (cache.getIfPresent(key) != null) {
            return true;
        }
        cache.put(key, VALUE);
        return false;
    }

    private static Evictor evictor(LarderCache<Long, byte[]> cache) {
        return ((NativeCache<?, ?>) cache).evictor;
    }

    private static int hotKeysPresent(LarderCache<Long, byte[]> cache, int hot) {
        int present = 0;
        for (long k = 0; k < hot; k++) {
            present += cache.containsKey(k) ? 1 : 0;
        }
        return present;
    }

    @Test
    void aFloodOfOneTimeKeysDoesNotPushTheHotSetOut() {
        try (LarderCache<Long, byte[]> cache = cache(1_000)) {
            int hot = 500;
            for (int round = 0; round < 8; round++) {
                for (long k = 0; k < hot; k++) {
                    access(cache, k);
                }
            }
            // A scan of one-time keys, four for every read of a hot key: each hot key is read
            // again only after 2,000 new keys, twice the cache, so recency alone loses them all.
            long hotKey = 0;
            for (long k = 1_000_000; k < 1_200_000; k++) {
                access(cache, k);
                if (k % 4 == 0) {
                    access(cache, hotKey++ % hot);
                }
            }
            assertThat(hotKeysPresent(cache, hot))
                    .as("hot keys left after a scan of 200,000 one-time keys")
                    .isGreaterThanOrEqualTo(hot * 95 / 100);
            assertThat(cache.size()).isLessThanOrEqualTo(1_000);
        }
    }

    @Test
    void aFloodOfKeysCollidingInTheSketchDoesNotPushTheHotSetOut() {
        try (LarderCache<Long, byte[]> cache = cache(1_000)) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            int hot = 500;
            for (int round = 0; round < 8; round++) {
                for (long k = 0; k < hot; k++) {
                    access(cache, k);
                }
            }
            // Flood keys whose hashes land in the same sketch blocks as hot keys, so their
            // counters are shared with the hot set's: each is looked for among fresh keys.
            java.util.Set<Long> hotBlocks = new java.util.HashSet<>();
            for (long k = 0; k < hot; k++) {
                hotBlocks.add(nc.policy.sketchBlock(TestKeys.hashOfLong(nc, k)));
            }
            int flooded = 0;
            long hotKey = 0;
            for (long k = 1_000_000; flooded < 50_000; k++) {
                if (hotBlocks.contains(nc.policy.sketchBlock(TestKeys.hashOfLong(nc, k)))) {
                    access(cache, k);
                    access(cache, k); // twice, to look warmer than a one-time key
                    if (++flooded % 2 == 0) {
                        access(cache, hotKey++ % hot); // the hot set is still in use
                    }
                }
            }
            assertThat(hotKeysPresent(cache, hot))
                    .as("hot keys left after 50,000 colliding keys, each seen twice")
                    .isGreaterThanOrEqualTo(hot * 90 / 100);
        }
    }

    @Test
    void keysHotLongAgoDoNotFreezeAdmissionOfANewWorkingSet() {
        // Three caches, each with its own hash seed. In about one seed in 200 the stale keys stay
        // in protected, the loop displaces the first 1,000 keys instead and fits beside them, and
        // no victim ever defends its place long enough to be rotated (the loop then hits ~97%);
        // the mechanism must show in at least one of the three.
        long rotations = 0;
        for (int round = 0; round < 3; round++) {
            try (LarderCache<Long, byte[]> cache = cache(1_000)) {
                for (long k = 0; k < 1_000; k++) {
                    access(cache, k);
                }
                // 300 keys read 15 times each, then never again: their sketch counts are near the
                // top, their records unread by the time they reach probation's oldest end.
                for (long k = 10_000; k < 10_300; k++) {
                    for (int r = 0; r < 15; r++) {
                        access(cache, k);
                    }
                }
                // The workload moves to a loop of 700 new keys, which fits in the cache.
                int loop = 700;
                long hits = 0;
                for (int pass = 0; pass < 10; pass++) {
                    for (long k = 100_000; k < 100_000 + loop; k++) {
                        boolean hit = access(cache, k);
                        hits += hit && pass >= 4 ? 1 : 0;
                    }
                }
                // Measured (2026-11-29): 77-100% of passes 4-9 hit over 2,000 seeds (median 93%);
                // without rotating a victim that keeps winning, stale victims reject newcomers
                // until the sketch ages: median 79%, a twentieth of 500 seeds under 50%, the
                // worst 37.5%. So the rotation count below is what tells the two apart in every
                // seed; the hit rate catches a freeze.
                assertThat((double) hits / (6 * loop))
                        .as("hit rate of the new loop's passes 4-9")
                        .isGreaterThanOrEqualTo(0.7);
                rotations += evictor(cache).defenderRotations();
            }
        }
        assertThat(rotations).as("victims rotated in the three caches").isPositive();
    }

    @Test
    void aLoopLargerThanTheCacheStillHits() {
        int capacity = 1_000;
        int loop = 1_200; // Bélády keeps capacity - 1 of each pass: about 83% hits
        try (LarderCache<Long, byte[]> cache = cache(capacity)) {
            long hits = 0;
            long requests = 0;
            for (int pass = 0; pass < 50; pass++) {
                for (long k = 0; k < loop; k++) {
                    hits += access(cache, k) ? 1 : 0;
                    requests++;
                }
            }
            double belady = (double) (capacity - 1) / loop;
            assertThat((double) hits / requests)
                    .as("loop hit rate, at least 80%% of the clairvoyant %.3f", belady)
                    .isGreaterThanOrEqualTo(0.8 * belady);
        }
    }

    @Test
    void mainIsSegmentedAndTheQueuesCountsMatchWhereRecordsAre() {
        int capacity = 2_000;
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(64L << 20)
                .maximumEntries(capacity)
                .executor(Runnable::run)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            SplittableRandom random = new SplittableRandom(11);
            byte[] longer = {1, 2, 3}; // another size: an overwrite appends to the window
            for (int op = 0; op < 300_000; op++) {
                // Skewed keys: a small hot range read often, a wide cold range.
                long key = random.nextInt(4) == 0 ? random.nextInt(20_000) : random.nextInt(1_500);
                switch (random.nextInt(20)) {
                    case 0 -> cache.remove(key);
                    case 1 -> cache.put(key, random.nextBoolean() ? VALUE : longer);
                    default -> access(cache, key);
                }
                if (op % 10_000 == 9_999) {
                    long[] byQueue = QueueRecount.byQueue(nc);
                    assertThat(nc.evictor.windowEntries())
                            .as("window entries at op %d", op)
                            .isEqualTo(byQueue[PageStore.WINDOW]);
                    assertThat(nc.queues.protectedEntries())
                            .as("protected entries at op %d", op)
                            .isEqualTo(byQueue[PageStore.PROTECTED]);
                    assertThat(byQueue[PageStore.WINDOW] + byQueue[PageStore.PROBATION] + byQueue[PageStore.PROTECTED])
                            .isEqualTo(cache.size());
                }
            }
            cache.cleanUp();
            long[] byQueue = QueueRecount.byQueue(nc);
            long mainEntries = byQueue[PageStore.PROBATION] + byQueue[PageStore.PROTECTED];
            // Hot keys read on probation were promoted; protected keeps its share of main, 80% of
            // the cache less the window's target, so probation always has room to judge new
            // records. The routine (which cleanUp runs) demotes the excess with bounded work, and
            // records read since they were last looked at go round first, so after the hill
            // climber grows the window protected may still be a little over its new target: up
            // to 14 entries of 1,516 in 12 runs; 2% allowed. With demotion turned off it held
            // 1,727 against a bound of 1,630.
            long protectedTarget = nc.policy.protectedTarget(capacity, nc.policy.windowTarget(capacity));
            assertThat(protectedTarget).isEqualTo((long) (0.8 * (capacity - nc.policy.windowTarget(capacity))));
            assertThat(byQueue[PageStore.PROTECTED]).as("protected entries").isGreaterThan(mainEntries / 2);
            assertThat(byQueue[PageStore.PROTECTED])
                    .as("protected entries")
                    .isLessThanOrEqualTo(protectedTarget + protectedTarget / 50);
        }
    }

    @Test
    void noAccessPatternMakesOneEvictionLookAtMoreThanAConstantNumberOfEntries() {
        long bound = Evictor.MAX_EXAMINED;
        SplittableRandom random = new SplittableRandom(7);
        // Every entry read before each insert: every record has its access count saturated.
        try (LarderCache<Long, byte[]> cache = cache(2_000)) {
            for (long k = 0; k < 2_000; k++) {
                access(cache, k);
            }
            for (long next = 2_000; next < 20_000; next++) {
                for (int r = 0; r < 4; r++) {
                    for (long k = next - 2_000; k < next; k += 7) {
                        cache.getIfPresent(k);
                    }
                }
                access(cache, next);
            }
            assertThat(evictor(cache).maxExaminedPerEviction()).isBetween(1, (int) bound);
        }
        // A loop, a scan after a hot set, and random keys.
        try (LarderCache<Long, byte[]> cache = cache(2_000)) {
            for (int pass = 0; pass < 20; pass++) {
                for (long k = 0; k < 2_500; k++) {
                    access(cache, k);
                }
            }
            for (long k = 0; k < 200_000; k++) {
                access(cache, k % 100 == 0 ? k % 1_000 : 10_000 + k);
            }
            for (int i = 0; i < 200_000; i++) {
                access(cache, random.nextLong(10_000));
            }
            assertThat(evictor(cache).maxExaminedPerEviction()).isBetween(1, (int) bound);
        }
    }

    /**
     * Each cache draws its own hash seed, which moves a run's hit rate by about a point either
     * way (sketch collisions): three caches of each kind are averaged.
     */
    @Test
    void twoThreadsOnAZipfWorkloadHitAboutAsOftenAsOne() throws InterruptedException {
        int capacity = 2_000;
        int keys = 100_000;
        int requests = 1_000_000;
        int runs = 3;
        double single = 0;
        double both = 0;
        for (int run = 0; run < runs; run++) {
            try (LarderCache<Long, byte[]> cache = cache(capacity)) {
                single += zipfHits(cache, new ZipfKeys(keys, 0.99, run), requests) / (double) requests / runs;
            }
            try (LarderCache<Long, byte[]> cache = cache(capacity)) {
                AtomicLong hits = new AtomicLong();
                CountDownLatch start = new CountDownLatch(1);
                Thread[] threads = new Thread[2];
                for (int t = 0; t < threads.length; t++) {
                    ZipfKeys zipf = new ZipfKeys(keys, 0.99, 100 + 2 * run + t);
                    threads[t] = new Thread(() -> {
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        hits.addAndGet(zipfHits(cache, zipf, requests / 2));
                    });
                    threads[t].start();
                }
                start.countDown();
                for (Thread t : threads) {
                    t.join();
                }
                both += hits.get() / (double) requests / runs;
            }
        }
        assertThat(both)
                .as("mean hit rate on two threads vs %.4f on one: concurrency costs at most a point", single)
                .isGreaterThanOrEqualTo(single - 0.01);
    }

    private static long zipfHits(LarderCache<Long, byte[]> cache, ZipfKeys zipf, int requests) {
        long hits = 0;
        for (int i = 0; i < requests; i++) {
            hits += access(cache, zipf.next()) ? 1 : 0;
        }
        return hits;
    }

    /** Keys 0..n-1 with probability proportional to 1/(rank+1)^s, by inverting the CDF. */
    private static final class ZipfKeys {
        private final double[] cdf;
        private final SplittableRandom random;

        ZipfKeys(int n, double s, long seed) {
            cdf = new double[n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += 1 / Math.pow(i + 1, s);
                cdf[i] = sum;
            }
            for (int i = 0; i < n; i++) {
                cdf[i] /= sum;
            }
            random = new SplittableRandom(seed);
        }

        long next() {
            int at = java.util.Arrays.binarySearch(cdf, random.nextDouble());
            // Scatter ranks so that popular keys are not neighbours.
            return ((at < 0 ? -at - 1 : at) * 0x9E3779B97F4A7C15L) >>> 20;
        }
    }
}
