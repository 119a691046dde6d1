package dev.larder.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Failures the cache survives but must not hide: each is counted, and logged (with its stack
 * trace) the first time and then at each power of two, so that one failing on every call
 * cannot flood the log, and a second kind still shows.
 */
final class FailureLog {
    private static final System.Logger LOG = System.getLogger(NativeCache.class.getName());
    /** Every failure of every log in this JVM: the test suite fails a test that caused one unasked. */
    private static final AtomicLong EVERYWHERE = new AtomicLong();

    private final AtomicLong count = new AtomicLong();
    private final String what;

    /** {@code what} names the failure in the log ("a maintenance pass failed", ...). */
    FailureLog(String what) {
        this.what = what;
    }

    /** Counts one failure and logs it if its number is a power of two; {@code outcome} says what was done about it. */
    void failed(String outcome, Throwable cause) {
        EVERYWHERE.incrementAndGet();
        long n = count.incrementAndGet();
        if ((n & (n - 1)) == 0) {
            LOG.log(System.Logger.Level.WARNING, what + "; " + outcome + " (" + n + " so far)", cause);
        }
    }

    /** How many failures every log in this JVM has counted. */
    static long everywhere() {
        return EVERYWHERE.get();
    }

    /** How many failures were counted. */
    long count() {
        return count.get();
    }
}
