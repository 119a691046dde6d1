package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.NativeMemory;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A cache built with {@link LarderBuilder#adviseHugePages} (pages mapped and advised for huge
 * pages: 2 MiB pages at a 2 GiB budget, 128 KiB pages carved from advised slabs at 256 MiB)
 * stores, evicts and reads back like any other, and returns all its native memory on close. Whether the kernel grants the huge pages is its own
 * setting; that the advice is given is NativeMemoryTest's.
 */
class HugePageAdviceTest {

    @ParameterizedTest
    @ValueSource(longs = {2L << 30, 256L << 20})
    void aCacheOnAdvisedPagesWorksAndReturnsItsMemory(long maximumBytes) {
        long before = NativeMemory.outstandingBytes();
        int entries = 20_000;
        try (LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(maximumBytes)
                .maximumEntries(entries)
                .adviseHugePages(true)
                .executor(Runnable::run)
                .build()) {
            for (long i = 0; i < 3L * entries; i++) {
                cache.put(i, value(i));
            }
            assertThat(cache.size()).isBetween(entries * 9L / 10, (long) entries);
            long present = 0;
            for (long i = 0; i < 3L * entries; i++) {
                byte[] v = cache.getIfPresent(i);
                if (v != null) {
                    assertThat(v).as("value of key %d", i).isEqualTo(value(i));
                    present++;
                }
            }
            assertThat(present).isEqualTo(cache.size());
            assertThat(NativeMemory.outstandingBytes() - before).isGreaterThanOrEqualTo(2L << 20);
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    private static byte[] value(long i) {
        byte[] v = new byte[200];
        Arrays.fill(v, (byte) i);
        v[0] = (byte) (i >>> 8);
        return v;
    }
}
