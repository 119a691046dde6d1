package dev.larder;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker moved by hand. Starts at a whole number of seconds so every step stays on whole ms. */
final class FakeTicker implements Ticker {
    private final AtomicLong nanos = new AtomicLong(1_000L * 1_000_000_000L);

    @Override
    public long read() {
        return nanos.get();
    }

    void advance(Duration duration) {
        advanceNanos(duration.toNanos());
    }

    void advanceNanos(long delta) {
        if (delta < 0) {
            throw new IllegalArgumentException("time never goes back: " + delta);
        }
        nanos.addAndGet(delta);
    }
}
