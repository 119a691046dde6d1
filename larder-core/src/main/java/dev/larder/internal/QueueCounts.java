package dev.larder.internal;

import dev.larder.internal.concurrent.LinePadded;
import dev.larder.internal.memory.PageStore;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many entries main's two queues hold; the window holds the rest of the cache's entries.
 *
 * <p>Only the evictor moves records into main, and it runs under the maintenance lock, so its
 * moves are counted in plain fields. Other threads only take records out of main (a removal, or
 * an overwrite, whose new record goes to the window): those are counted in adders. An insert
 * counts nothing here, since a new record always goes to the window and the entry count has
 * it already. That spared three atomic additions per insert into a full cache: the writer's
 * count of the window, and the evictor's of the window and of evictions (docs/speed-work.md).
 */
final class QueueCounts extends LinePadded {
    /** Records the evictor put in main (probation or protected) less those it took out of it. */
    private long mainByEvictor;
    /** Records the evictor put in protected less those it took out of it. */
    private long protectedByEvictor;
    /** Records other threads took out of main, protected's included. */
    private final LongAdder mainLeft = new LongAdder();
    /** Records other threads took out of protected. */
    private final LongAdder protectedLeft = new LongAdder();

    /** Entries in probation and protected. The evictor's own count is exact only on its thread. */
    long main() {
        return mainByEvictor - mainLeft.sum();
    }

    /** Entries in protected. The evictor's own count is exact only on its thread. */
    long protectedEntries() {
        return protectedByEvictor - protectedLeft.sum();
    }

    /**
     * A thread other than the evictor took a record out of {@code queue} (removed, or overwritten):
     * the queue its page was in at that moment, as {@code PageStore.recordLeft} read it in the same
     * atomic step that counted the record out of the page (pages of main can move whole between
     * probation and protected).
     */
    void left(int queue) {
        if (queue != PageStore.WINDOW) {
            mainLeft.increment();
            if (queue == PageStore.PROTECTED) {
                protectedLeft.increment();
            }
        }
    }

    /** The evictor evicted (or removed as expired) a record of {@code queue}. */
    void evictorRemoved(int queue) {
        evictorMoved(queue, PageStore.WINDOW);
    }

    /** The evictor moved a record from {@code from} to {@code to}. */
    void evictorMoved(int from, int to) {
        evictorMoved(from, to, 1);
    }

    /** The evictor moved {@code n} records from {@code from} to {@code to} (a page moved whole). */
    void evictorMoved(int from, int to, long n) {
        // Stored only when they change: an eviction from the window changes neither, and a store
        // would take this line from a writer about to read mainLeft.
        int mainDelta = inMain(to) - inMain(from);
        if (mainDelta != 0) {
            mainByEvictor += n * mainDelta;
        }
        int protectedDelta = (to == PageStore.PROTECTED ? 1 : 0) - (from == PageStore.PROTECTED ? 1 : 0);
        if (protectedDelta != 0) {
            protectedByEvictor += n * protectedDelta;
        }
    }

    private static int inMain(int queue) {
        return queue == PageStore.WINDOW ? 0 : 1;
    }
}
