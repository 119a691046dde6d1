package dev.larder.bench;

import java.nio.charset.StandardCharsets;

/**
 * The benchmark keys: 16 ASCII characters, {@code "key:"} and 12 hex digits of a bijective
 * scramble of the key's index, so keys are unique, look random to hash functions and are the
 * same in every run and every process. With {@code -Dlarder.bench.keyBytes=N} (16 to 1,024; for
 * runs by hand) the keys are N characters: {@code "key:"}, N - 16 dashes and the 12 digits, a long
 * prefix every key shares, as in {@code "tenant:region:user:..."}.
 */
public final class Keys {
    /** Bytes per key, as UTF-8. */
    public static final int KEY_BYTES = keyBytes(System.getProperty("larder.bench.keyBytes"));

    static int keyBytes(String property) {
        int n = property == null ? 16 : Integer.parseInt(property.trim());
        if (n < 16 || n > 1024) {
            throw new IllegalArgumentException("larder.bench.keyBytes must be 16 to 1024: " + n);
        }
        return n;
    }

    private static final long MASK48 = (1L << 48) - 1;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Keys() {}

    /** The key with index {@code index} (0 to 2^48 - 1). */
    public static String key(long index) {
        if (index < 0 || index > MASK48) {
            throw new IllegalArgumentException("index out of range: " + index);
        }
        long x = scramble(index);
        byte[] chars = new byte[KEY_BYTES];
        chars[0] = 'k';
        chars[1] = 'e';
        chars[2] = 'y';
        chars[3] = ':';
        java.util.Arrays.fill(chars, 4, KEY_BYTES - 12, (byte) '-');
        for (int i = KEY_BYTES - 1; i >= KEY_BYTES - 12; i--) {
            chars[i] = (byte) HEX[(int) (x & 0xF)];
            x >>>= 4;
        }
        return new String(chars, StandardCharsets.ISO_8859_1);
    }

    /** Keys {@code from} (inclusive) to {@code from + count} (exclusive). */
    public static String[] keys(long from, int count) {
        String[] keys = new String[count];
        for (int i = 0; i < count; i++) {
            keys[i] = key(from + i);
        }
        return keys;
    }

    /** A bijection on 48 bits: odd multipliers and xor-shifts are each invertible mod 2^48. */
    static long scramble(long x) {
        x = (x * 0x9E3779B97F4BL) & MASK48;
        x ^= x >>> 23;
        x = (x * 0xD6E8FEB86659L) & MASK48;
        x ^= x >>> 21;
        return x;
    }

    /**
     * One step of xorshift64 (shifts 13, 7, 17): the generator every benchmark and probe draws its
     * keys with, in its own thread's state (no allocation, nothing shared, a few instructions).
     */
    static long xorshift(long x) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }

    /** An index in [0, {@code bound}) from the high 32 bits of {@code x}: a multiply, no division. */
    static int indexBelow(long x, int bound) {
        return (int) (((x >>> 32) * bound) >>> 32);
    }

    /** A value of {@code size} bytes whose content is derived from {@code seed}. */
    public static byte[] value(long seed, int size) {
        byte[] value = new byte[size];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < size; i++) {
            x = xorshift(x);
            value[i] = (byte) x;
        }
        return value;
    }
}
