package dev.larder.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * The cache's counters. Each is a {@link LongAdder}: threads that update at once spread over
 * cells, so counting costs no lock and no shared cache line on the hot path; reading sums the
 * cells on demand. Hits and puts are not here: the read and write buffers count them as they
 * record them (see {@code NativeCache.reads}).
 */
final class StatsCounters {
    final LongAdder misses = new LongAdder();
    final LongAdder removals = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder expirations = new LongAdder();
    final LongAdder rejectedPuts = new LongAdder();
    final LongAdder loadSuccesses = new LongAdder();
    final LongAdder loadFailures = new LongAdder();
    final LongAdder loadNanos = new LongAdder();
}
