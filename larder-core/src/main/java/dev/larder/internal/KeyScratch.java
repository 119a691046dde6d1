package dev.larder.internal;

import dev.larder.Codec;
import dev.larder.internal.memory.RecordLayout;
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
    /**
     * A header to parse records into on this thread's hot paths: a header allocated there would
     * escape into the (large, not always inlined) parse method and cost an allocation per call.
     */
    final RecordLayout.Header header = new RecordLayout.Header();

    /** Writes by this thread, to run the routine maintenance every so many (deterministically). */
    int writes;

    private boolean inUse;

    private KeyScratch(int capacity) {
        this.segment = MemorySegment.ofArray(new byte[capacity]);
    }

    /** Encodes {@code key}; the caller must {@link #release()} it. */
    @SuppressWarnings("unchecked")
    static <K> KeyScratch encode(Codec<K> codec, K key, int maxKeyLength) {
        KeyScratch s = LOCAL.get();
        if (s.inUse) {
            s = new KeyScratch(64);
        }
        int len;
        if (codec instanceof TrustedCodec<?> trusted) {
            // One pass into a buffer big enough for any encoding of the key.
            TrustedCodec<K> t = (TrustedCodec<K>) trusted;
            long max = t.maxEncodedSize(key);
            if (max > maxKeyLength * 3L + 3) {
                len = codec.size(key); // absurdly long: measure first, and reject below
                checkLength(len, maxKeyLength);
            }
            s.ensureCapacity((int) Math.min(max, maxKeyLength * 3L + 3));
            len = t.encode(key, s.segment, 0);
        } else {
            len = codec.size(key);
            checkLength(len, maxKeyLength);
            s.ensureCapacity(len);
            codec.write(key, s.segment.asSlice(0, len), 0);
        }
        checkLength(len, maxKeyLength);
        s.length = len;
        s.inUse = true;
        return s;
    }

    private static void checkLength(int len, int maxKeyLength) {
        if (len <= 0 || len > maxKeyLength) {
            throw new IllegalArgumentException(
                    "key of " + len + " bytes: keys must be 1 to " + maxKeyLength + " bytes when encoded");
        }
    }

    private void ensureCapacity(int bytes) {
        if (segment.byteSize() < bytes) {
            segment = MemorySegment.ofArray(new byte[Math.max(bytes, (int) segment.byteSize() * 2)]);
        }
    }

    void release() {
        inUse = false;
    }
}
