package dev.larder.internal.memory;

import java.util.Arrays;

/**
 * A binary min-heap of (deadline, page) pairs: sealed pages whose records all expire, ordered by
 * the latest deadline among their records. The evictor pops the pages whose every record is
 * past its deadline and reclaims them whole, so expired entries are found without looking at a
 * single live one. Entries may be stale (a reader extended a deadline, the page was reclaimed
 * meanwhile); the caller re-checks each popped page. Not thread-safe: the page store guards it.
 */
final class PageExpiryQueue {
    private long[] deadlines = new long[16];
    private int[] pages = new int[16];
    private int size;

    void add(long deadline, int page) {
        if (size == deadlines.length) {
            deadlines = Arrays.copyOf(deadlines, size * 2);
            pages = Arrays.copyOf(pages, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (deadlines[parent] - deadline <= 0) {
                break;
            }
            deadlines[i] = deadlines[parent];
            pages[i] = pages[parent];
            i = parent;
        }
        deadlines[i] = deadline;
        pages[i] = page;
    }

    boolean isEmpty() {
        return size == 0;
    }

    long peekDeadline() {
        return deadlines[0];
    }

    /** Removes the earliest entry and returns its page. */
    int poll() {
        int result = pages[0];
        size--;
        if (size > 0) {
            long deadline = deadlines[size];
            int page = pages[size];
            int i = 0;
            for (; ; ) {
                int child = 2 * i + 1;
                if (child >= size) {
                    break;
                }
                if (child + 1 < size && deadlines[child + 1] - deadlines[child] < 0) {
                    child++;
                }
                if (deadline - deadlines[child] <= 0) {
                    break;
                }
                deadlines[i] = deadlines[child];
                pages[i] = pages[child];
                i = child;
            }
            deadlines[i] = deadline;
            pages[i] = page;
        }
        return result;
    }
}
