package dev.larder.internal.hash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A 64-bit hash of key bytes in the wyhash family: 16 bytes per step, each step a 64x64→128-bit
 * multiply folded to 64 bits. Seeded per cache so an attacker who does not know the seed cannot
 * aim keys at one slot. Different bit ranges of the result feed the shard, the slot and the tag
 * (see {@link dev.larder.internal.index.IndexWord}).
 */
public final class KeyHash {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final long P0 = 0xa0761d6478bd642fL;
    private static final long P1 = 0xe7037ed1a0b428dbL;
    private static final long P2 = 0x8ebc6af09c88c6e3L;
    private static final long P3 = 0x589965cc75374cc3L;

    private KeyHash() {}

    /** Hashes {@code length} bytes of {@code segment} at {@code offset}. */
    public static long hash(long seed, MemorySegment segment, long offset, int length) {
        long h = seed ^ mix(seed ^ P0, length ^ P1);
        long i = 0;
        for (; i + 16 <= length; i += 16) {
            h = mix(segment.get(LONG, offset + i) ^ P1, segment.get(LONG, offset + i + 8) ^ h);
        }
        int rest = (int) (length - i);
        long a;
        long b;
        if (rest >= 8) {
            a = segment.get(LONG, offset + i);
            b = segment.get(LONG, offset + length - 8);
        } else if (rest >= 4) {
            a = segment.get(INT, offset + i) & 0xFFFFFFFFL;
            b = segment.get(INT, offset + length - 4) & 0xFFFFFFFFL;
        } else if (rest > 0) {
            long end = offset + i;
            a = ((segment.get(ValueLayout.JAVA_BYTE, end) & 0xFFL) << 16)
                    | ((segment.get(ValueLayout.JAVA_BYTE, end + (rest >> 1)) & 0xFFL) << 8)
                    | (segment.get(ValueLayout.JAVA_BYTE, end + rest - 1) & 0xFFL);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
        return mix(P2 ^ length, mix(a ^ P1, b ^ h) ^ P3);
    }

    private static final VarHandle ARRAY_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle ARRAY_INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * The same hash of {@code bytes[0, length)}, read from a heap array: the lookup path hashes
     * the encoded key there, where reads are plain array loads instead of segment accesses.
     */
    public static long hash(long seed, byte[] bytes, int length) {
        long h = seed ^ mix(seed ^ P0, length ^ P1);
        int i = 0;
        for (; i + 16 <= length; i += 16) {
            h = mix((long) ARRAY_LONG.get(bytes, i) ^ P1, (long) ARRAY_LONG.get(bytes, i + 8) ^ h);
        }
        int rest = length - i;
        long a;
        long b;
        if (rest >= 8) {
            a = (long) ARRAY_LONG.get(bytes, i);
            b = (long) ARRAY_LONG.get(bytes, length - 8);
        } else if (rest >= 4) {
            a = (int) ARRAY_INT.get(bytes, i) & 0xFFFFFFFFL;
            b = (int) ARRAY_INT.get(bytes, length - 4) & 0xFFFFFFFFL;
        } else if (rest > 0) {
            a = ((bytes[i] & 0xFFL) << 16) | ((bytes[i + (rest >> 1)] & 0xFFL) << 8) | (bytes[i + rest - 1] & 0xFFL);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
        return mix(P2 ^ length, mix(a ^ P1, b ^ h) ^ P3);
    }

    private static long mix(long a, long b) {
        long lo = a * b;
        long hi = Math.unsignedMultiplyHigh(a, b);
        return lo ^ hi;
    }
}
