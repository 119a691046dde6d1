package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.LarderCache;
import dev.larder.ValueReader;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hits on a record whose ACCESS bits are saturated, and overwrites of it, reach the policy one in
 * {@link NativeCache#SATURATED_HIT_SAMPLE}; every hit on or write of a record not yet saturated
 * is recorded; the hit and put counts stay exact either way, on both read paths (the copying GET
 * and the zero-copy read).
 */
class SaturatedHitSamplingTest {
    private static final int SAMPLE = NativeCache.SATURATED_HIT_SAMPLE;

    @Test
    void theSampleIsAPowerOfTwoAboveOne() {
        assertThat(Integer.bitCount(SAMPLE)).isEqualTo(1);
        assertThat(SAMPLE).isGreaterThan(1);
    }

    @Test
    void theExperimentKnobTakesOnlyPowersOfTwoUpTo1024() {
        assertThat(NativeCache.saturatedHitSample(null)).isEqualTo(8);
        assertThat(NativeCache.saturatedHitSample(" 1 ")).isEqualTo(1);
        assertThat(NativeCache.saturatedHitSample("64")).isEqualTo(64);
        assertThat(NativeCache.saturatedHitSample("1024")).isEqualTo(1024);
        for (String bad : new String[] {"0", "-8", "3", "2048", "eight", ""}) {
            assertThat(NativeCache.saturatedHitSample(bad)).as(bad).isEqualTo(8);
        }
    }

    @Test
    void hitsOnASaturatedRecordAreSampledAndStillCounted() {
        withFullCache((cache, nativeCache) -> {
            long hot = 7;
            saturate(cache, nativeCache, hot);
            long hitsBefore = cache.stats().hitCount();
            long recordedBefore = nativeCache.recordedReads();
            int reads = 4 * SAMPLE;
            for (int i = 0; i < reads; i++) {
                assertThat(cache.getIfPresent(hot)).containsExactly(1);
            }
            assertThat(cache.stats().hitCount() - hitsBefore).as("hits counted").isEqualTo(reads);
            assertThat(nativeCache.recordedReads() - recordedBefore)
                    .as("hits recorded for the policy")
                    .isEqualTo(reads / SAMPLE);
        });
    }

    @Test
    void zeroCopyHitsOnASaturatedRecordAreSampledToo() {
        withFullCache((cache, nativeCache) -> {
            long hot = 11;
            saturate(cache, nativeCache, hot);
            long hitsBefore = cache.stats().hitCount();
            long recordedBefore = nativeCache.recordedReads();
            int reads = 4 * SAMPLE;
            ValueReader<Byte> firstByte = value -> value.get(ValueLayout.JAVA_BYTE, 0);
            for (int i = 0; i < reads; i++) {
                assertThat(cache.read(hot, firstByte)).isEqualTo((byte) 1);
            }
            assertThat(cache.stats().hitCount() - hitsBefore).isEqualTo(reads);
            assertThat(nativeCache.recordedReads() - recordedBefore).isEqualTo(reads / SAMPLE);
        });
    }

    @Test
    void overwritesOfASaturatedRecordAreSampledAndStillCounted() {
        withFullCache((cache, nativeCache) -> {
            long hot = 13;
            saturate(cache, nativeCache, hot);
            long putsBefore = cache.stats().putCount();
            long recordedBefore = nativeCache.recordedWrites();
            int writes = 4 * SAMPLE;
            // No routine maintenance pass (every 128 writes of a thread) in the loop: it may walk
            // the hot record and lower its ACCESS bits, which would rightly record more writes.
            KeyScratch.current().writes = 0;
            for (int i = 0; i < writes; i++) {
                cache.put(hot, new byte[] {(byte) i});
            }
            assertThat(cache.getIfPresent(hot)).containsExactly((byte) (writes - 1));
            assertThat(cache.stats().putCount() - putsBefore).as("puts counted").isEqualTo(writes);
            assertThat(nativeCache.recordedWrites() - recordedBefore)
                    .as("puts recorded for the policy")
                    .isEqualTo(writes / SAMPLE);
        });
    }

    @Test
    void anOverwriteOfARecordNotYetSaturatedIsRecorded() {
        withFullCache((cache, nativeCache) -> {
            long cold = 5;
            assertThat(accessBits(nativeCache, cold)).isLessThan(RecordLayout.MAX_ACCESS);
            long recordedBefore = nativeCache.recordedWrites();
            cache.put(cold, new byte[] {2});
            assertThat(nativeCache.recordedWrites() - recordedBefore).isEqualTo(1);
        });
    }

    @Test
    void hitsOnARecordNotYetSaturatedAreAllRecorded() {
        withFullCache((cache, nativeCache) -> {
            long cold = 3;
            assertThat(accessBits(nativeCache, cold)).isLessThan(RecordLayout.MAX_ACCESS);
            long recordedBefore = nativeCache.recordedReads();
            for (int i = 0; i < 2; i++) {
                assertThat(cache.getIfPresent(cold)).containsExactly(1);
            }
            assertThat(nativeCache.recordedReads() - recordedBefore).isEqualTo(2);
        });
    }

    private interface CacheTest {
        void run(LarderCache<Long, byte[]> cache, NativeCache<Long, byte[]> nativeCache);
    }

    /** A full cache of 1,000 entries whose maintenance never runs on its own (a parked executor). */
    @SuppressWarnings("unchecked")
    private static void withFullCache(CacheTest test) {
        List<Runnable> parked = new ArrayList<>();
        try (LarderCache<Long, byte[]> cache = ParkedFullCache.open(parked)) {
            test.run(cache, (NativeCache<Long, byte[]>) cache);
        }
    }

    /** Reads the key until the drains have saturated its record's ACCESS bits. */
    private static void saturate(LarderCache<Long, byte[]> cache, NativeCache<Long, byte[]> nativeCache, long key) {
        for (int round = 0; round < 10 && accessBits(nativeCache, key) < RecordLayout.MAX_ACCESS; round++) {
            for (int i = 0; i < RecordLayout.MAX_ACCESS; i++) {
                cache.getIfPresent(key);
            }
            cache.cleanUp(); // drains the reads: the drain marks the record
        }
        assertThat(accessBits(nativeCache, key))
                .as("ACCESS bits of key %d", key)
                .isEqualTo(RecordLayout.MAX_ACCESS);
    }

    private static int accessBits(NativeCache<Long, byte[]> nativeCache, long key) {
        long location = nativeCache.locationOf(key);
        MemorySegment page = nativeCache.store.page(location);
        return RecordLayout.access(page, nativeCache.store.offset(location));
    }
}
