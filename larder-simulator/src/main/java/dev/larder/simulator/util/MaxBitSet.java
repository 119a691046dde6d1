package dev.larder.simulator.util;

/**
 * A set of integers in {@code [0, capacity)} with O(log64 capacity) insert, delete and maximum:
 * a 64-ary tree of bit words in which a bit of a level-{@code k+1} word says whether the
 * corresponding level-{@code k} word is non-zero. Four levels cover 16M elements.
 */
public final class MaxBitSet {
    /** levels[0] holds the elements; the last level is a single word. */
    private final long[][] levels;

    private final int capacity;

    public MaxBitSet(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative, was " + capacity);
        }
        this.capacity = capacity;
        int count = 1;
        for (long words = wordsFor(capacity); words > 1; words = wordsFor(words)) {
            count++;
        }
        levels = new long[count][];
        long bits = capacity;
        for (int level = 0; level < count; level++) {
            levels[level] = new long[(int) wordsFor(bits)];
            bits = levels[level].length;
        }
    }

    private static long wordsFor(long bits) {
        return Math.max(1, (bits + 63) >>> 6);
    }

    public boolean get(int i) {
        check(i);
        return (levels[0][i >>> 6] & (1L << i)) != 0;
    }

    public void set(int i) {
        check(i);
        long index = i;
        for (long[] level : levels) {
            int word = (int) (index >>> 6);
            long before = level[word];
            level[word] = before | (1L << index);
            if (before != 0) {
                return; // the levels above already know this word is non-empty
            }
            index = word;
        }
    }

    public void clear(int i) {
        check(i);
        long index = i;
        for (long[] level : levels) {
            int word = (int) (index >>> 6);
            long after = level[word] & ~(1L << index);
            level[word] = after;
            if (after != 0) {
                return;
            }
            index = word;
        }
    }

    /** The largest element, or -1 if the set is empty. */
    public int max() {
        int top = levels.length - 1;
        if (levels[top][0] == 0) {
            return -1;
        }
        int index = 0;
        for (int level = top; level >= 0; level--) {
            long word = levels[level][index];
            index = (index << 6) + 63 - Long.numberOfLeadingZeros(word);
        }
        return index;
    }

    private void check(int i) {
        if (i < 0 || i >= capacity) {
            throw new IndexOutOfBoundsException("element " + i + " outside [0, " + capacity + ")");
        }
    }
}
