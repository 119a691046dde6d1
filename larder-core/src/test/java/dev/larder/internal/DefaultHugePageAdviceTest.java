package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderBuilder;
import dev.larder.LarderCache;
import dev.larder.internal.memory.NativeMemory;
import org.junit.jupiter.api.Test;

/**
 * A builder that says nothing about huge pages advises them where the JVM grants Larder native
 * access (the test JVM runs with {@code --enable-native-access=ALL-UNNAMED}), and a cache large
 * enough then carves its pages from advised slabs; {@code adviseHugePages(false)} keeps ordinary
 * pages.
 */
class DefaultHugePageAdviceTest {
    private static final long BYTES = 256L << 20; // 128 KiB pages, 128 slabs

    @Test
    void theDefaultIsToAdviseWhereNativeAccessIsGranted() {
        assertThat(NativeMemory.hugePageAdviceGranted())
                .isEqualTo(NativeMemory.class.getModule().isNativeAccessEnabled()
                        && System.getProperty("os.name").startsWith("Linux")
                        && System.getProperty("os.arch").matches("amd64|x86_64|aarch64"));
        assumeTrue(NativeMemory.hugePageAdviceGranted(), "native access granted on Linux");
        assertThat(carvesSlabs(Larder.newBuilder(Codecs.longs(), Codecs.bytes()).maximumBytes(BYTES)))
                .isTrue();
        assertThat(carvesSlabs(Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                        .maximumBytes(BYTES)
                        .adviseHugePages(false)))
                .isFalse();
        assertThat(carvesSlabs(Larder.newBuilder(Codecs.longs(), Codecs.bytes()).maximumBytes(16L << 20)))
                .as("a small cache, whose one partly used slab would be a large share of it")
                .isFalse();
    }

    private static boolean carvesSlabs(LarderBuilder<Long, byte[]> builder) {
        long before = NativeMemory.outstandingBytes();
        boolean carves;
        try (LarderCache<Long, byte[]> cache = builder.executor(Runnable::run).build()) {
            cache.put(1L, new byte[100]);
            assertThat(cache.getIfPresent(1L)).hasSize(100);
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            carves = nc.store.carvesSlabs();
            assertThat(nc.store.mappedSlabs()).isEqualTo(carves ? 1 : 0);
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
        return carves;
    }
}
