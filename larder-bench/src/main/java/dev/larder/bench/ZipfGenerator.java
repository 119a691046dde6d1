package dev.larder.bench;

import java.util.SplittableRandom;

/**
 * Draws ranks 1..n with probability proportional to {@code 1 / rank^exponent}, in constant time
 * and memory per draw, by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
 * to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): invert the
 * integral of the continuous hat {@code x^-s} and accept the integer under it.
 */
public final class ZipfGenerator {
    private final long n;
    private final double exponent;
    private final double integralAtHalf; // H(1.5) - 1
    private final double integralAtN; // H(n + 0.5)
    private final double squeeze;

    public ZipfGenerator(long n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be positive, was " + n);
        }
        if (!(exponent > 0)) {
            throw new IllegalArgumentException("exponent must be positive, was " + exponent);
        }
        this.n = n;
        this.exponent = exponent;
        this.integralAtHalf = integral(1.5) - 1.0;
        this.integralAtN = integral(n + 0.5);
        this.squeeze = 2.0 - inverseIntegral(integral(2.5) - density(2.0));
    }

    /** The number of ranks. */
    public long n() {
        return n;
    }

    /** A rank in [1, n]. */
    public long next(SplittableRandom random) {
        while (true) {
            double u = integralAtN + random.nextDouble() * (integralAtHalf - integralAtN);
            double x = inverseIntegral(u);
            long k = (long) (x + 0.5);
            if (k < 1) {
                k = 1;
            } else if (k > n) {
                k = n;
            }
            if (k - x <= squeeze || u >= integral(k + 0.5) - density(k)) {
                return k;
            }
        }
    }

    /** The exact probability of rank {@code k}; O(n), for tests. */
    public double probability(long k) {
        double norm = 0;
        for (long i = 1; i <= n; i++) {
            norm += Math.pow(i, -exponent);
        }
        return Math.pow(k, -exponent) / norm;
    }

    /** The hat {@code x^-s}. */
    private double density(double x) {
        return Math.exp(-exponent * Math.log(x));
    }

    /** {@code H(x) = (x^(1-s) - 1) / (1-s)}, or {@code ln x} at s = 1, written to stay exact near s = 1. */
    private double integral(double x) {
        double logX = Math.log(x);
        return expm1OverX((1.0 - exponent) * logX) * logX;
    }

    private double inverseIntegral(double y) {
        double t = y * (1.0 - exponent);
        if (t < -1.0) {
            t = -1.0; // rounding at the lower bound
        }
        return Math.exp(log1pOverX(t) * y);
    }

    /** {@code (e^x - 1) / x}, 1 at 0. */
    static double expm1OverX(double x) {
        return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + x * 0.25));
    }

    /** {@code ln(1 + x) / x}, 1 at 0. */
    static double log1pOverX(double x) {
        return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25));
    }
}
