package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.internal.memory.NativeMemory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads filling a cache whose pages are carved from huge-page slabs with small values, past its
 * budget, then writing large values among small ones: the large values take budget from the log's
 * free pages (which gives slab pages back with MADV_DONTNEED, or unmaps whole slabs) while other
 * threads take pages and read.
 * Every value read is whole and the one its key was written with, and all native memory is
 * returned on close.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlabChurnStressTest {
    private static final int THREADS = 3;
    /** Small values of this many keys per thread fill the log past the budget first. */
    private static final int FILL_PER_THREAD = 200_000;

    private static final int KEYS = THREADS * FILL_PER_THREAD;
    private static final int PUTS_PER_THREAD = 20_000;

    @Test
    void smallAndLargeValuesChurnOnSlabPagesWithoutTornReadsOrLeaks() throws Exception {
        assumeTrue(NativeMemory.hugePageAdviceGranted(), "native access granted on Linux");
        long before = NativeMemory.outstandingBytes();
        AtomicLong reads = new AtomicLong();
        AtomicLong large = new AtomicLong();
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(160L << 20)
                .adviseHugePages(true)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            assertThat(nc.store.carvesSlabs()).isTrue();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = 17 + t;
                threads.add(Thread.ofPlatform().start(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    try {
                        start.await();
                        long first = (seed - 17) * FILL_PER_THREAD;
                        for (long key = first; key < first + FILL_PER_THREAD; key++) {
                            cache.put(key, value(key, 100 + (int) (key % 200)));
                        }
                        start.await();
                        for (int i = 0; i < PUTS_PER_THREAD && failure.get() == null; i++) {
                            long key = random.nextInt(KEYS);
                            // One value in 16 is large (an extent of its own, whose budget comes
                            // from the log's free pages); the rest are small records.
                            int length = random.nextInt(16) == 0
                                    ? 20_000 + random.nextInt(40_000)
                                    : 100 + random.nextInt(300);
                            if (length > 10_000) {
                                large.incrementAndGet();
                            }
                            cache.put(key, value(key, length));
                            long other = random.nextInt(KEYS);
                            byte[] read = cache.getIfPresent(other);
                            if (read != null) {
                                check(other, read);
                                reads.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(reads.get()).as("reads that found their key").isPositive();
            assertThat(large.get()).isPositive();
            assertThat(nc.store.pagesReleased())
                    .as("slab pages given back for the large values' budget")
                    .isPositive();
            assertThat(cache.memoryUsed()).isLessThanOrEqualTo(160L << 20);
            for (long key = 0; key < KEYS; key++) {
                byte[] read = cache.getIfPresent(key);
                if (read != null) {
                    check(key, read);
                }
            }
        }
        assertThat(NativeMemory.outstandingBytes())
                .as("native memory after close")
                .isEqualTo(before);
    }

    /** The key, then the length, then bytes that depend on both. */
    private static byte[] value(long key, int length) {
        byte[] v = new byte[length];
        ByteBuffer.wrap(v).putLong(key).putInt(length);
        byte fill = (byte) (key * 31 + length);
        for (int i = 12; i < length; i++) {
            v[i] = fill;
        }
        return v;
    }

    private static void check(long key, byte[] read) {
        ByteBuffer b = ByteBuffer.wrap(read);
        assertThat(b.getLong()).as("key in the value of %d", key).isEqualTo(key);
        assertThat(b.getInt()).as("length in the value of %d", key).isEqualTo(read.length);
        byte fill = (byte) (key * 31 + read.length);
        for (int i = 12; i < read.length; i++) {
            if (read[i] != fill) {
                throw new AssertionError("value of key " + key + " torn at byte " + i + " of " + read.length);
            }
        }
    }
}
