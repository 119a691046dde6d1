package dev.larder.internal;

import dev.larder.internal.concurrent.OwnLineLongs;
import java.util.concurrent.atomic.LongAdder;

/**
 * The cache's counters. Each is a {@link LongAdder}: threads that update at once spread over
 * cells, so counting costs no lock and no shared cache line on the hot path; reading sums the
 * cells on demand. Hits and puts are not here: the read and write buffers count them as they
 * record them (see {@code NativeCache.reads}). Evictions are the exception: only the evictor
 * counts them, under the maintenance lock, so a plain addition published by a release store
 * does, without an atomic one per eviction; on a line of its own, since a thread counting a miss
 * reads this object's fields while the evictor counts (docs/speed-work.md, forty-first session).
 */
final class StatsCounters {
    final LongAdder misses = new LongAdder();
    final LongAdder removals = new LongAdder();
    final LongAdder expirations = new LongAdder();
    final LongAdder rejectedPuts = new LongAdder();
    final LongAdder loadSuccesses = new LongAdder();
    final LongAdder loadFailures = new LongAdder();
    final LongAdder loadNanos = new LongAdder();

    private final OwnLineLongs evictions = new OwnLineLongs(1);

    /** One more eviction. Only under the maintenance lock: there is one writer at a time. */
    void countEviction() {
        evictions.setRelease(0, evictions.get(0) + 1);
    }

    long evictions() {
        return evictions.getAcquire(0);
    }
}
