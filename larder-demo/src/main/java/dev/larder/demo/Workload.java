package dev.larder.demo;

import java.util.SplittableRandom;

/**
 * The data and the key popularity both caches see: keys {@code "user:0000123456"}, values of a
 * fixed size that carry their key's index so a read can check it got the right bytes, and a
 * Zipf-like skewed choice of keys.
 */
final class Workload {
    private static final String KEY_PREFIX = "user:";
    private static final int KEY_DIGITS = 10;

    private final Settings settings;
    /** Precomputed terms of the inverse of the continuous Zipf CDF; see {@link #nextIndex}. */
    private final double oneMinusS;

    private final double spanPow;
    private final long stride;

    Workload(Settings settings) {
        this.settings = settings;
        this.oneMinusS = 1.0 - settings.zipfExponent();
        this.spanPow = Math.pow(settings.keySpace(), oneMinusS) - 1.0;
        this.stride = coprimeStride(settings.keySpace());
    }

    /** The key of entry {@code index}: {@code "user:"} and the index in ten digits. */
    static String key(long index) {
        char[] chars = new char[KEY_PREFIX.length() + KEY_DIGITS];
        KEY_PREFIX.getChars(0, KEY_PREFIX.length(), chars, 0);
        long n = index;
        for (int i = chars.length - 1; i >= KEY_PREFIX.length(); i--) {
            chars[i] = (char) ('0' + (int) (n % 10));
            n /= 10;
        }
        return new String(chars);
    }

    /** A value for entry {@code index}: the index in its first 8 bytes, then a pattern. */
    byte[] value(long index) {
        byte[] v = new byte[settings.valueBytes()];
        for (int i = 0; i < Long.BYTES; i++) {
            v[i] = (byte) (index >>> (56 - 8 * i));
        }
        for (int i = Long.BYTES; i < v.length; i++) {
            v[i] = (byte) (index + i);
        }
        return v;
    }

    /** Whether {@code value} is the value of entry {@code index} (size and embedded index). */
    boolean matches(byte[] value, long index) {
        if (value.length != settings.valueBytes()) {
            return false;
        }
        long embedded = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            embedded = (embedded << 8) | (value[i] & 0xFF);
        }
        return embedded == index && value[value.length - 1] == (byte) (index + value.length - 1);
    }

    /**
     * Draws an entry index in {@code [0, keySpace)}: a popularity rank from a Zipf-like
     * distribution (inverting the continuous approximation of its CDF, so no table is kept on
     * the heap), spread over the key space by a fixed permutation so that the popular keys are
     * a mix of filled and not-yet-filled ones.
     */
    long nextIndex(SplittableRandom random) {
        double u = random.nextDouble();
        long rank = (long) Math.pow(1.0 + u * spanPow, 1.0 / oneMinusS) - 1;
        int n = settings.keySpace();
        if (rank < 0) {
            rank = 0;
        } else if (rank >= n) {
            rank = n - 1;
        }
        return Math.floorMod(rank * stride, (long) n);
    }

    /** A multiplier coprime with {@code n}, so that {@code rank * stride mod n} is a bijection. */
    private static long coprimeStride(int n) {
        long s = 1_000_003;
        while (gcd(s, n) != 1) {
            s += 2;
        }
        return s;
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
