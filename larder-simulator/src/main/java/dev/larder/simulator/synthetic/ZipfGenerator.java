package dev.larder.simulator.synthetic;

import java.util.SplittableRandom;

/**
 * Draws ranks {@code 1..n} with probability proportional to {@code k^-s}, in constant expected
 * time and memory, for any {@code n} and any exponent {@code s >= 0} (including 1), by
 * rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates
 * from monotone discrete distributions", ACM TOMACS 6(3), 1996).
 *
 * <p>The idea: take the continuous hat {@code h(x) = x^-s} and its integral {@code H}. Rank
 * {@code k} owns the stretch {@code [H(k+1/2) - h(k), H(k+1/2)]} of the line, whose length is
 * exactly {@code h(k)}, and the stretches of neighbouring ranks do not overlap because {@code h}
 * is convex. Draw {@code u} uniformly between {@code H(3/2) - h(1)} and {@code H(n+1/2)}, invert
 * {@code x = H^-1(u)} and round it to {@code k}; accept when {@code u} falls in {@code k}'s
 * stretch, otherwise draw again. Most draws are accepted without evaluating {@code H(k+1/2)}: for
 * {@code x} close enough to the right of {@code k} acceptance is certain ({@link #squeeze}).
 *
 * <p>{@code H} and its inverse are written with {@code log1p}/{@code expm1} so they stay exact
 * as {@code s} approaches 1, where {@code H(x) = log x}.
 */
public final class ZipfGenerator {
    private final long n;
    private final double exponent;
    private final double lowU;
    private final double highU;
    private final double squeeze;

    /**
     * @param n the number of ranks, at least 1
     * @param exponent the skew {@code s}, non-negative (0 is uniform)
     */
    public ZipfGenerator(long n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be positive, was " + n);
        }
        if (!(exponent >= 0) || Double.isInfinite(exponent)) {
            throw new IllegalArgumentException("exponent must be finite and non-negative, was " + exponent);
        }
        this.n = n;
        this.exponent = exponent;
        this.lowU = hIntegral(1.5) - 1.0;
        this.highU = hIntegral(n + 0.5);
        this.squeeze = 2.0 - hIntegralInverse(hIntegral(2.5) - h(2.0));
    }

    public long n() {
        return n;
    }

    public double exponent() {
        return exponent;
    }

    /** The next rank, in {@code [1, n]}. */
    public long next(SplittableRandom random) {
        while (true) {
            double u = highU + random.nextDouble() * (lowU - highU);
            double x = hIntegralInverse(u);
            long k = (long) (x + 0.5);
            if (k < 1) {
                k = 1;
            } else if (k > n) {
                k = n;
            }
            if (k - x <= squeeze || u >= hIntegral(k + 0.5) - h(k)) {
                return k;
            }
        }
    }

    /** {@code h(x) = x^-s}. */
    private double h(double x) {
        return Math.exp(-exponent * Math.log(x));
    }

    /** {@code H(x) = (x^(1-s) - 1) / (1-s)}, and {@code log x} when {@code s = 1}. */
    private double hIntegral(double x) {
        double logX = Math.log(x);
        return expm1OverX((1.0 - exponent) * logX) * logX;
    }

    /** The inverse of {@link #hIntegral}. */
    private double hIntegralInverse(double y) {
        double t = y * (1.0 - exponent);
        if (t < -1.0) {
            t = -1.0; // only reachable through rounding at the far end of the range
        }
        return Math.exp(log1pOverX(t) * y);
    }

    /** {@code log(1+x)/x}, continuous at 0. */
    static double log1pOverX(double x) {
        if (Math.abs(x) > 1e-8) {
            return Math.log1p(x) / x;
        }
        return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
    }

    /** {@code (e^x - 1)/x}, continuous at 0. */
    static double expm1OverX(double x) {
        if (Math.abs(x) > 1e-8) {
            return Math.expm1(x) / x;
        }
        return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
    }
}
