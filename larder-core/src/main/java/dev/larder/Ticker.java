package dev.larder;

/** A source of nanosecond time for expiry; replace it in tests to move time by hand. */
@FunctionalInterface
public interface Ticker {
    /** Nanoseconds from an arbitrary origin, never decreasing. */
    long read();

    /** The system ticker, {@link System#nanoTime()}. */
    static Ticker system() {
        return System::nanoTime;
    }
}
