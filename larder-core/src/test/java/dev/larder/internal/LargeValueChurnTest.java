package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.MemoryEstimator;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A full cache of large values that takes new keys: every insert needs an extent and every
 * eviction frees one, so the extents evictions free must serve the inserts. Making a new one
 * per insert (and freeing the kept ones, each a thread handshake) made such inserts 3-6 µs
 * where OHC takes ~2.5 (docs/speed-work.md, twenty-fourth session).
 */
class LargeValueChurnTest {
    private static final int ENTRIES = 2_000;
    private static final int VALUE = 16_384;

    private static byte[] value(int i) {
        byte[] v = new byte[VALUE];
        Arrays.fill(v, 0, 64, (byte) i);
        v[VALUE - 1] = (byte) (i >>> 8);
        return v;
    }

    private static String key(int i) {
        return String.format("key-%012d", i);
    }

    @ParameterizedTest(name = "writers={0}")
    @ValueSource(ints = {1, 2})
    void insertsPastTheBoundReuseTheExtentsEvictionsFree(int writers) throws InterruptedException {
        long budget = MemoryEstimator.estimate(ENTRIES, 16, VALUE).recommendedMaximumBytes();
        try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(budget)
                .maximumEntries(ENTRIES)
                .expectedEntries(ENTRIES)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            for (int i = 0; i < ENTRIES; i++) {
                cache.put(key(i), value(i));
            }
            long before = nc.large.extentsMade();
            int inserts = 20_000;
            Thread[] threads = new Thread[writers];
            for (int w = 0; w < writers; w++) {
                int first = ENTRIES + w * (inserts / writers);
                threads[w] = Thread.ofPlatform().start(() -> {
                    for (int i = first; i < first + inserts / writers; i++) {
                        cache.put(key(i), value(i));
                    }
                });
            }
            for (Thread t : threads) {
                t.join();
            }
            long made = nc.large.extentsMade() - before;
            assertThat(made).as("extents made for %d inserts", inserts).isLessThan(inserts / 20);
            assertThat(cache.size()).isGreaterThan(ENTRIES * 95L / 100);
            assertThat(cache.memoryUsed()).isLessThanOrEqualTo(budget);
            int last = ENTRIES + inserts; // a new key, put after the writers are done, is in the window
            cache.put(key(last), value(last));
            assertThat(cache.getIfPresent(key(last))).isEqualTo(value(last));
            assertThat(cache.stats().survivedFailureCount()).isZero();
        }
    }
}
