package dev.larder.internal;

import dev.larder.internal.concurrent.FieldHandles;
import dev.larder.internal.concurrent.LinePadded;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * How many entries the cache holds: a counter every insert adds to with a CAS, on a line of its
 * own. As an {@code AtomicLong} it sat next to the queue counts, which the evictor writes at
 * every eviction, so a writer's CAS on one core and the evictor on the other took the line from
 * each other (docs/speed-work.md, twenty-fifth session).
 */
final class EntryCount extends LinePadded {
    private static final VarHandle VALUE = FieldHandles.of(MethodHandles.lookup(), "value", long.class);

    @SuppressWarnings("unused") // through VALUE
    private volatile long value;

    long get() {
        return value;
    }

    boolean compareAndSet(long expected, long next) {
        return VALUE.compareAndSet(this, expected, next);
    }

    long addAndGet(long delta) {
        return (long) VALUE.getAndAdd(this, delta) + delta;
    }

    long decrementAndGet() {
        return addAndGet(-1);
    }
}
