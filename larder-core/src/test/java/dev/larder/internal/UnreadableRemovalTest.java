package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codec;
import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import dev.larder.RemovalCause;
import dev.larder.internal.memory.LargeValueStore;
import org.junit.jupiter.api.Test;

/** Removals of entries a codec cannot read back. */
@NoHiddenFailures.Expected
class UnreadableRemovalTest {

    /**
     * A value codec that cannot read some of what it wrote: the entries it fails on are evicted
     * all the same, without a word to the listener (it would get no value) and without the
     * writer whose put evicted them seeing the codec's exception; their large values' extents
     * still go back (they once stayed until the cache closed).
     */
    @Test
    void aValueCodecThatFailsToReadNeverBreaksEviction() {
        Codec<byte[]> bytes = Codecs.bytes();
        Codec<byte[]> picky = new Codec<>() {
            @Override
            public int size(byte[] value) {
                return bytes.size(value);
            }

            @Override
            public void write(byte[] value, java.lang.foreign.MemorySegment target, long offset) {
                bytes.write(value, target, offset);
            }

            @Override
            public byte[] read(java.lang.foreign.MemorySegment source, long offset, int length) {
                if (source.get(java.lang.foreign.ValueLayout.JAVA_BYTE, offset) == 'x') {
                    throw new IllegalArgumentException("not a value this codec reads");
                }
                return bytes.read(source, offset, length);
            }
        };
        java.util.List<byte[]> notices = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.List<RemovalCause> causes = new java.util.concurrent.CopyOnWriteArrayList<>();
        long before = dev.larder.internal.memory.NativeMemory.outstandingBytes();
        try (LarderCache<String, byte[]> c = Larder.newBuilder(Codecs.utf8(), picky)
                .maximumBytes(4L << 20)
                .maximumEntries(5)
                .removalListener((k, v, cause) -> {
                    notices.add(v);
                    causes.add(cause);
                })
                .executor(Runnable::run)
                .build()) {
            for (int i = 0; i < 40; i++) {
                byte[] value = new byte[i % 2 == 0 ? 50_000 : 100]; // large and small values
                value[0] = (byte) (i % 4 < 2 ? 'x' : 'o');
                c.put("k" + i, value);
            }
            c.cleanUp();
            assertThat(c.size()).isEqualTo(5);
            assertThat(c.stats().evictionCount()).isEqualTo(35);
            assertThat(notices)
                    .as("told of the evictions the codec could read")
                    .isNotEmpty()
                    .allMatch(v -> v[0] == 'o');
            assertThat(causes).containsOnly(RemovalCause.SIZE);
            assertThat(c.stats().survivedFailureCount())
                    .as("evictions the listener was not told of")
                    .isEqualTo(35 - notices.size());
            assertThat(((NativeCache<?, ?>) c).large.bytes())
                    .as("extents of values held: none past its eviction")
                    .isLessThanOrEqualTo(5 * LargeValueStore.classExtentBytes(50_000));
        }
        assertThat(dev.larder.internal.memory.NativeMemory.outstandingBytes()).isEqualTo(before);
    }
}
