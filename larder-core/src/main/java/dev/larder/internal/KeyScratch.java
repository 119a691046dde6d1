package dev.larder.internal;

import dev.larder.Codec;
import java.lang.foreign.MemorySegment;

/**
 * A per-thread heap buffer that a key is encoded into before it is hashed and compared, so a
 * lookup allocates nothing. A nested use on the same thread (a compute function or listener
 * that calls the cache) gets a fresh buffer instead of overwriting the outer one.
 */
final class KeyScratch {
    private static final ThreadLocal<KeyScratch> LOCAL = ThreadLocal.withInitial(() -> new KeyScratch(64));

    MemorySegment segment;
    int length;
    private boolean inUse;

    private KeyScratch(int capacity) {
        this.segment = MemorySegment.ofArray(new byte[capacity]);
    }

    /** Encodes {@code key}; the caller must {@link #release()} it. */
    static <K> KeyScratch encode(Codec<K> codec, K key, int maxKeyLength) {
        KeyScratch s = LOCAL.get();
        if (s.inUse) {
            s = new KeyScratch(64);
        }
        int len = codec.size(key);
        if (len <= 0 || len > maxKeyLength) {
            throw new IllegalArgumentException(
                    "key of " + len + " bytes: keys must be 1 to " + maxKeyLength + " bytes when encoded");
        }
        if (s.segment.byteSize() < len) {
            s.segment = MemorySegment.ofArray(new byte[Math.max(len, (int) s.segment.byteSize() * 2)]);
        }
        if (codec instanceof TrustedCodec) {
            codec.write(key, s.segment, 0);
        } else {
            codec.write(key, s.segment.asSlice(0, len), 0);
        }
        s.length = len;
        s.inUse = true;
        return s;
    }

    void release() {
        inUse = false;
    }
}
