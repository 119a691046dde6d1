package dev.larder.internal;

import dev.larder.Codecs;
import dev.larder.internal.hash.KeyHash;
import java.lang.foreign.MemorySegment;

/** Test helpers about keys as a cache sees them. */
final class TestKeys {
    private TestKeys() {}

    /** The hash {@code cache} gives the {@code Codecs.longs()} key {@code key}. */
    static long hashOfLong(NativeCache<?, ?> cache, long key) {
        MemorySegment bytes = MemorySegment.ofArray(new byte[Long.BYTES]);
        Codecs.longs().write(key, bytes, 0);
        return KeyHash.hash(cache.seed, bytes, 0, Long.BYTES);
    }
}
