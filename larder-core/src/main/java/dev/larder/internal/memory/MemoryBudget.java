package dev.larder.internal.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The cache's native memory budget: every allocation (pages, large values, index tables)
 * reserves its bytes here first, and a reservation that would pass the maximum fails, so the
 * cache never holds more than its budget.
 */
public final class MemoryBudget {
    private final long maximum;
    private final AtomicLong used = new AtomicLong();

    public MemoryBudget(long maximum) {
        this.maximum = maximum;
    }

    /** Reserves {@code bytes} if they fit under the maximum; returns whether they did. */
    public boolean tryReserve(long bytes) {
        for (; ; ) {
            long current = used.get();
            if (current + bytes > maximum) {
                return false;
            }
            if (used.compareAndSet(current, current + bytes)) {
                return true;
            }
        }
    }

    /** Returns bytes reserved earlier. */
    public void release(long bytes) {
        used.addAndGet(-bytes);
    }

    public long used() {
        return used.get();
    }

    public long maximum() {
        return maximum;
    }

    /** Bytes that could still be reserved now. */
    public long available() {
        return maximum - used.get();
    }
}
