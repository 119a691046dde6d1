package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.CacheStats;
import dev.larder.Codec;
import dev.larder.Codecs;
import dev.larder.EntryTooLargeException;
import dev.larder.Larder;
import dev.larder.LarderBuilder;
import dev.larder.LarderCache;
import dev.larder.testing.NativeLeakCheck;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cache split into partitions: one key lives in one partition, the entry bound is the whole
 * cache's (slots lent where the keys are), and the whole-cache calls see every partition.
 */
@Timeout(120)
class PartitionedCacheTest {
    private static final byte[] VALUE = {1, 2, 3, 4};

    private NativeLeakCheck leaks;

    @BeforeEach
    void recordNativeMemory() {
        leaks = new NativeLeakCheck();
    }

    @AfterEach
    void everythingReturned() {
        leaks.closeAllAndCheck();
    }

    private LarderCache<String, byte[]> cache(int partitions, long maximumEntries) {
        LarderBuilder<String, byte[]> b =
                Larder.newBuilder(Codecs.utf8(), Codecs.bytes()).maximumBytes(64L << 20);
        if (maximumEntries > 0) {
            b.maximumEntries(maximumEntries);
        }
        LarderCache<String, byte[]> cache = b.partitions(partitions).build();
        return leaks.track(cache);
    }

    private static PartitionedCache<String, byte[]> partitioned(LarderCache<String, byte[]> cache) {
        assertThat(cache).isInstanceOf(PartitionedCache.class);
        return (PartitionedCache<String, byte[]>) cache;
    }

    private static long boundsTotal(PartitionedCache<?, ?> cache) {
        long total = 0;
        for (int i = 0; i < cache.partitionCount(); i++) {
            total += cache.partitionAt(i).maximumEntries;
        }
        return total;
    }

    @Test
    void theDefaultIsOnePartitionPerCoreForLargeEntryBoundsOnly() {
        long big = 1L << 30;
        assertThat(CacheSizing.partitions(big, 10_000, -1, 2)).isEqualTo(1);
        assertThat(CacheSizing.partitions(big, 65_535, -1, 2)).isEqualTo(1);
        assertThat(CacheSizing.partitions(big, 65_536, -1, 2)).isEqualTo(2);
        assertThat(CacheSizing.partitions(big, 1_000_000, -1, 2)).isEqualTo(2);
        assertThat(CacheSizing.partitions(big, 1_000_000, -1, 1)).isEqualTo(1);
        assertThat(CacheSizing.partitions(big, 1_000_000, -1, 8)).isEqualTo(8);
        assertThat(CacheSizing.partitions(big, 100_000, -1, 8))
                .as("32,768 entries each at least")
                .isEqualTo(2);
        assertThat(CacheSizing.partitions(big, 1_000_000, -1, 6))
                .as("a power of two")
                .isEqualTo(8);
        assertThat(CacheSizing.partitions(16L << 20, 1_000_000, -1, 8))
                .as("8 MiB each at least")
                .isEqualTo(2);
        assertThat(CacheSizing.partitions(big, -1, -1, 8))
                .as("bounded by bytes alone")
                .isEqualTo(1);
        assertThat(CacheSizing.partitions(big, -1, 1_000_000, 8))
                .as("bounded by bytes, expecting many entries")
                .isEqualTo(8);
        assertThat(CacheSizing.partitions(big, -1, 50_000, 8))
                .as("bounded by bytes, expecting few entries")
                .isEqualTo(1);
        assertThat(CacheSizing.partitions(big, 100_000, 10_000_000, 8))
                .as("the entry bound decides when there is one")
                .isEqualTo(2);
    }

    /** Pages as large as the whole cache's (its longest key, huge pages), shards shared out. */
    @Test
    void aPartitionHasTheWholeCachesPageSizeAndAShareOfItsShards() {
        for (long bytes : new long[] {64L << 20, 330L << 20, 4L << 30}) {
            CacheSizing whole = CacheSizing.of(bytes, -1, -1, 0, 2);
            CacheSizing half = CacheSizing.of(bytes / 2, -1, -1, 0, 2, 2);
            CacheSizing quarter = CacheSizing.of(bytes / 4, -1, -1, 0, 2, 4);
            assertThat(half.pageSize()).as("pages at %d bytes", bytes).isEqualTo(whole.pageSize());
            assertThat(quarter.pageSize()).isEqualTo(whole.pageSize());
            assertThat(half.maxKeyLength()).isEqualTo(whole.maxKeyLength());
            assertThat(2 * half.shards()).as("shards at %d bytes", bytes).isEqualTo(whole.shards());
            assertThat(4 * quarter.shards()).isEqualTo(whole.shards());
        }
        PartitionedCache<String, byte[]> cache = partitioned(cache(2, 100_000));
        assertThat(cache.partitionAt(0).sizing)
                .isEqualTo(CacheSizing.of(
                        32L << 20, 50_000, -1, -1, Runtime.getRuntime().availableProcessors(), 2));
    }

    @Test
    void theBuilderBuildsTheCountAskedFor() {
        assertThat(partitioned(cache(4, -1)).partitionCount()).isEqualTo(4);
        assertThat(cache(1, 1_000_000)).isInstanceOf(NativeCache.class);
        assertThat(partitioned(cache(3, 1_000)).partitionCount()).isEqualTo(3);
    }

    @Test
    void badPartitionCountsNameTheProblem() {
        LarderBuilder<String, byte[]> b = Larder.newBuilder(Codecs.utf8(), Codecs.bytes());
        assertThatThrownBy(() -> b.partitions(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions must be in [1, 256], was 0");
        assertThatThrownBy(() -> b.partitions(257)).hasMessageContaining("was 257");
        assertThatThrownBy(() -> Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                        .maximumBytes(1L << 20)
                        .partitions(32)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("partitions (32) leave each less than 65536 bytes of maximumBytes (1048576)");
        assertThatThrownBy(() -> Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                        .maximumBytes(8L << 20)
                        .maximumEntries(3)
                        .partitions(4)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("partitions (4) exceed maximumEntries (3)");
    }

    @Test
    void aKeyLivesInExactlyOnePartitionAndKeysSpreadEvenly() {
        PartitionedCache<String, byte[]> cache = partitioned(cache(4, -1));
        int keys = 40_000;
        for (int i = 0; i < keys; i++) {
            cache.put("key-" + i, VALUE);
        }
        for (int i = 0; i < 2_000; i++) {
            String key = "key-" + i;
            int holders = 0;
            for (int p = 0; p < 4; p++) {
                if (cache.partitionAt(p).containsKey(key)) {
                    holders++;
                    assertThat(cache.partition(key)).isSameAs(cache.partitionAt(p));
                }
            }
            assertThat(holders).as("partitions holding %s", key).isEqualTo(1);
        }
        for (int p = 0; p < 4; p++) {
            assertThat(cache.partitionAt(p).size())
                    .as("partition %d's share", p)
                    .isBetween(9_000L, 11_000L);
        }
        assertThat(cache.size()).isEqualTo(keys);
    }

    @Test
    void aCacheFilledToItsBoundWithThatManyKeysKeepsThemAll() {
        long bound = 100_000;
        PartitionedCache<String, byte[]> cache = partitioned(cache(4, bound));
        for (int i = 0; i < bound; i++) {
            cache.put("key-" + i, VALUE);
        }
        // The keys do not split evenly: the partitions that got more borrowed slots.
        assertThat(cache.stats().evictionCount()).isZero();
        assertThat(cache.size()).isEqualTo(bound);
        for (int i = 0; i < bound; i++) {
            assertThat(cache.containsKey("key-" + i)).as("key-%d", i).isTrue();
        }
        assertThat(boundsTotal(cache)).isEqualTo(bound);
    }

    @Test
    void theWholeBoundHoldsUnderInsertsAndRemovalsLetSlotsBeLentAgain() {
        long bound = 20_000;
        PartitionedCache<String, byte[]> cache = twoPartitionsFilledPast(bound);
        cache.cleanUp();
        assertThat(cache.size()).isBetween(bound - 4 * Evictor.entryBatch(bound), bound);
        assertThat(boundsTotal(cache)).isEqualTo(bound);
        long evicted = cache.stats().evictionCount();
        assertThat(evicted).isGreaterThanOrEqualTo(2 * bound - 4 * Evictor.entryBatch(bound));

        // Empty one partition by removals; new keys of the other then fit without evicting, in the
        // slots the first one lends down to its floor (half its first share).
        NativeCache<String, byte[]> first = cache.partitionAt(0);
        List<String> inFirst = keysOf(cache, first);
        inFirst.forEach(cache::remove);
        assertThat(first.size()).isZero();
        int added = 0;
        for (int i = 0; added < inFirst.size() / 4; i++) {
            String key = "new-" + i;
            if (cache.partition(key) != first) {
                cache.put(key, VALUE);
                added++;
            }
        }
        cache.cleanUp();
        assertThat(cache.stats().evictionCount())
                .as("the second partition borrowed the first one's free slots")
                .isEqualTo(evicted);
        assertThat(cache.partitionAt(1).size()).isGreaterThan(bound / 2 + added / 2);
        assertThat(boundsTotal(cache)).isEqualTo(bound);
    }

    /**
     * A pass that evicts for the bound borrows first, whichever thread runs it: one may find a
     * partition past its bound between a writer's insert and that writer's borrow. Here a
     * partition is put past its bound by moving its slots to the other, and cleanUp's routine
     * pass borrows them back instead of evicting.
     */
    @Test
    void aRoutinePassPastThePartitionsBoundBorrowsBeforeItEvicts() {
        long bound = 20_000;
        PartitionedCache<String, byte[]> cache = partitioned(cache(2, bound));
        for (int i = 0; i < bound / 2; i++) {
            cache.put("key-" + i, VALUE);
        }
        NativeCache<String, byte[]> first = cache.partitionAt(0);
        NativeCache<String, byte[]> second = cache.partitionAt(1);
        long over = 10;
        long moved = second.maximumEntries - second.size() + over;
        second.moveEntryBound(-moved);
        first.moveEntryBound(moved);
        assertThat(second.size()).isEqualTo(second.maximumEntries + over);

        cache.cleanUp();
        assertThat(cache.stats().evictionCount()).as("borrowed, not evicted").isZero();
        assertThat(cache.size()).isEqualTo(bound / 2);
        assertThat(second.size()).isLessThanOrEqualTo(second.maximumEntries);
        assertThat(boundsTotal(cache)).isEqualTo(bound);
    }

    /**
     * In a full cache (every partition evicting, each keeping two eviction batches free) a
     * removal reopens lending only once its partition has a slot to lend: a removal that leaves
     * none costs one look at its own partition, not a synchronized look at all of them on the
     * next insert.
     */
    @Test
    void aRemovalReopensLendingOnlyWhenItLeavesASpareSlot() {
        long bound = 20_000;
        PartitionedCache<String, byte[]> cache = twoPartitionsFilledPast(bound);
        NativeCache<String, byte[]> first = cache.partitionAt(0);
        EntryLender lender = first.lender();
        assertThat(lender.mayLend()).as("a full cache has nothing to lend").isFalse();
        Iterator<String> inFirst = keysOf(cache, first).iterator();

        cache.remove(inFirst.next());
        assertThat(first.spareEntries()).isNotPositive();
        assertThat(lender.mayLend())
                .as("one removal leaves no slot beyond the kept batches")
                .isFalse();

        while (first.spareEntries() <= 0) {
            cache.remove(inFirst.next());
        }
        assertThat(lender.mayLend())
                .as("the removal that left a spare slot reopened lending")
                .isTrue();
        // Fill the other partition to its bound and one past it: that one borrows, not evicts.
        NativeCache<String, byte[]> second = cache.partitionAt(1);
        long evicted = cache.stats().evictionCount();
        long boundBefore = second.maximumEntries;
        List<String> added = new ArrayList<>();
        for (int i = 0; second.size() <= boundBefore; i++) {
            String key = "new-" + i;
            if (cache.partition(key) == second) {
                cache.put(key, VALUE);
                added.add(key);
            }
        }
        cache.cleanUp();
        assertThat(cache.stats().evictionCount())
                .as("the other partition borrowed instead of evicting")
                .isEqualTo(evicted);
        assertThat(second.maximumEntries).isGreaterThan(boundBefore);
        assertThat(added).allSatisfy(k -> assertThat(cache.containsKey(k)).as(k).isTrue());
        assertThat(boundsTotal(cache)).isEqualTo(bound);
    }

    /** A cache of two partitions and {@code bound} entries, given three times as many new keys. */
    private PartitionedCache<String, byte[]> twoPartitionsFilledPast(long bound) {
        PartitionedCache<String, byte[]> cache = partitioned(cache(2, bound));
        for (int i = 0; i < 3 * bound; i++) {
            cache.put("key-" + i, VALUE);
        }
        return cache;
    }

    private static List<String> keysOf(PartitionedCache<String, byte[]> cache, NativeCache<String, byte[]> part) {
        List<String> keys = new ArrayList<>();
        cache.keys().forEachRemaining(k -> {
            if (cache.partition(k) == part) {
                keys.add(k);
            }
        });
        return keys;
    }

    /**
     * Bytes are split, not lent: a value must fit its partition's share of maximumBytes, and
     * a partition evicts for bytes on its own while another has room.
     */
    @Test
    void aValueMustFitItsPartitionsShareOfTheBytes() {
        LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(16L << 20)
                .partitions(4)
                .build();
        leaks.track(cache);
        cache.put("fits", new byte[2 << 20]);
        assertThat(cache.getIfPresent("fits")).hasSize(2 << 20);
        assertThatThrownBy(() -> cache.put("too-large", new byte[5 << 20]))
                .isInstanceOf(EntryTooLargeException.class)
                .hasMessageContaining(
                        "cannot fit in its partition (one of 4 that share maximumBytes): its share is " + (4L << 20));
        assertThat(cache.getIfPresent("fits")).as("nothing stored is lost").hasSize(2 << 20);
        for (int i = 0; i < 64; i++) {
            cache.put("v" + i, new byte[1 << 20]);
        }
        assertThat(cache.memoryUsed()).isLessThanOrEqualTo(cache.memoryMax());
        assertThat(cache.stats().evictionCount()).isPositive();
    }

    @Test
    void statsIterationAndMemoryCoverEveryPartition() {
        PartitionedCache<String, byte[]> cache = partitioned(cache(4, -1));
        for (int i = 0; i < 1_000; i++) {
            cache.put("key-" + i, new byte[] {(byte) i});
        }
        for (int i = 0; i < 1_500; i++) {
            cache.getIfPresent("key-" + i);
        }
        CacheStats stats = cache.stats();
        assertThat(stats.hitCount()).isEqualTo(1_000);
        assertThat(stats.missCount()).isEqualTo(500);
        assertThat(stats.putCount()).isEqualTo(1_000);
        assertThat(stats.size()).isEqualTo(1_000);
        assertThat(stats.memoryMaxBytes()).isEqualTo(cache.memoryMax()).isEqualTo(4 * (16L << 20));
        assertThat(cache.memoryUsed()).isPositive().isLessThanOrEqualTo(cache.memoryMax());

        Set<String> seen = new HashSet<>();
        cache.entries().forEachRemaining(e -> {
            assertThat(seen.add(e.getKey())).as("%s iterated once", e.getKey()).isTrue();
            assertThat(e.getValue()[0])
                    .isEqualTo((byte) Integer.parseInt(e.getKey().substring(4)));
        });
        assertThat(seen).hasSize(1_000);

        Iterator<String> it = cache.keys();
        int removed = 0;
        while (it.hasNext()) {
            String key = it.next();
            if (key.hashCode() % 2 == 0) {
                it.remove();
                removed++;
                assertThat(cache.containsKey(key)).isFalse();
            }
        }
        assertThat(cache.size()).isEqualTo(1_000 - removed);
        assertThat(cache.asMap()).hasSize(1_000 - removed);
        cache.asMap().put("via-map", VALUE);
        Byte fourth = cache.read("via-map", seg -> seg.get(ValueLayout.JAVA_BYTE, 3));
        assertThat(fourth).isEqualTo((byte) 4);
        cache.clear();
        assertThat(cache.size()).isZero();
        assertThat(cache.keys().hasNext()).isFalse();
    }

    @Test
    void closingClosesEveryPartitionAndReturnsTheirMemory() {
        PartitionedCache<String, byte[]> cache = partitioned(cache(4, 10_000));
        for (int i = 0; i < 20_000; i++) {
            cache.put("key-" + i, new byte[300]);
        }
        assertThat(leaks.held()).isPositive();
        cache.close();
        assertThat(cache.isClosed()).isTrue();
        for (int p = 0; p < 4; p++) {
            assertThat(cache.partitionAt(p).isClosed()).isTrue();
        }
        assertThat(leaks.held()).isZero();
        assertThatThrownBy(() -> cache.getIfPresent("key-1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> cache.put("key-1", VALUE)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> cache.remove("key-1")).isInstanceOf(IllegalStateException.class);
    }

    /**
     * A routed call leaves its key's encoding for the partition; a call of another cache, with a
     * codec that encodes the same key otherwise, made from inside a compute function, must not
     * take it.
     */
    @Test
    void aHandedOffEncodingIsTakenOnlyByTheSameKeyAndCodec() {
        PartitionedCache<String, byte[]> cache = partitioned(cache(2, -1));
        LarderCache<String, byte[]> reversed = Larder.newBuilder(new ReversedUtf8(), Codecs.bytes())
                .maximumBytes(8L << 20)
                .build();
        leaks.track(reversed);
        reversed.put("abc", new byte[] {7});
        reversed.put("cba", new byte[] {9});
        AtomicReference<byte[]> seenInside = new AtomicReference<>();
        cache.compute("abc", (k, v) -> {
            seenInside.set(reversed.getIfPresent(k));
            return VALUE;
        });
        assertThat(seenInside.get()).containsExactly(7);
        assertThat(cache.getIfPresent("abc")).containsExactly(VALUE);
        assertThat(reversed.getIfPresent("abc")).containsExactly(7);

        // A key object changed between two calls is encoded again, not taken from the last one.
        byte[] key = {'k', '1'};
        LarderCache<byte[], byte[]> bytesKeyed = Larder.newBuilder(Codecs.bytes(), Codecs.bytes())
                .maximumBytes(8L << 20)
                .partitions(2)
                .build();
        leaks.track(bytesKeyed);
        bytesKeyed.putIfAbsent(key, new byte[] {1});
        key[1] = '2';
        bytesKeyed.putIfAbsent(key, new byte[] {2});
        assertThat(bytesKeyed.getIfPresent(new byte[] {'k', '1'})).containsExactly(1);
        assertThat(bytesKeyed.getIfPresent(new byte[] {'k', '2'})).containsExactly(2);
        assertThat(bytesKeyed.size()).isEqualTo(2);
    }

    @Test
    void concurrentWritersAndReadersAgreeWithAModelAndKeepTheBound() throws Exception {
        long bound = 40_000;
        PartitionedCache<String, byte[]> cache = partitioned(cache(4, bound));
        int threads = 4;
        ConcurrentHashMap<String, Integer> lastWritten = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread thread = new Thread(() -> {
                try {
                    start.await();
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    for (int i = 0; i < 60_000; i++) {
                        // Each thread owns its keys, so its last write is the model's value.
                        String key = "t" + id + "-" + r.nextInt(20_000);
                        int op = r.nextInt(10);
                        if (op < 5) {
                            int v = r.nextInt(1 << 20);
                            cache.put(key, ByteArrays.ofInt(v));
                            lastWritten.put(key, v);
                        } else if (op < 6) {
                            cache.remove(key);
                            lastWritten.remove(key);
                        } else {
                            byte[] got = cache.getIfPresent(key);
                            Integer expected = lastWritten.get(key);
                            if (got != null) {
                                assertThat(expected)
                                        .as("a value read for %s was written", key)
                                        .isNotNull();
                                assertThat(ByteArrays.toInt(got)).isEqualTo(expected);
                            }
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            thread.start();
            all.add(thread);
        }
        start.countDown();
        for (Thread thread : all) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        cache.cleanUp();
        assertThat(cache.size()).isLessThanOrEqualTo(bound);
        assertThat(boundsTotal(cache)).isEqualTo(bound);
        long present = 0;
        for (var e : lastWritten.entrySet()) {
            byte[] got = cache.getIfPresent(e.getKey());
            if (got != null) {
                present++;
                assertThat(ByteArrays.toInt(got)).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
        assertThat(present).isEqualTo(cache.size());
    }

    /** Big-endian ints as values. */
    private static final class ByteArrays {
        static byte[] ofInt(int v) {
            return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        }

        static int toInt(byte[] b) {
            return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
        }
    }

    /** UTF-8 of the string reversed: the same key objects encode differently from {@code utf8()}. */
    private static final class ReversedUtf8 implements Codec<String> {
        @Override
        public int size(String value) {
            return value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            byte[] b = new StringBuilder(value).reverse().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            MemorySegment.copy(MemorySegment.ofArray(b), 0, target, offset, b.length);
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            byte[] b = source.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
            return new StringBuilder(new String(b, java.nio.charset.StandardCharsets.UTF_8))
                    .reverse()
                    .toString();
        }
    }
}
