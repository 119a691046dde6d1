package dev.larder.simulator.util;

/**
 * An open-addressing {@code long -> int} map with linear probing, for counting over millions of
 * distinct keys without boxing. Values are non-negative; {@link #put} returns -1 for "absent".
 * Insert-only (the simulator never removes).
 */
public final class LongIntMap {
    private long[] keys;
    private int[] values; // value + 1; 0 marks an empty slot
    private int size;
    private int mask;

    public LongIntMap(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected) * 2 - 1) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        mask = capacity - 1;
    }

    /** Maps {@code key} to {@code value} (non-negative); returns the previous value or -1. */
    public int put(long key, int value) {
        if (value < 0) {
            throw new IllegalArgumentException("value must be non-negative, was " + value);
        }
        int slot = slot(key);
        while (values[slot] != 0) {
            if (keys[slot] == key) {
                int previous = values[slot] - 1;
                values[slot] = value + 1;
                return previous;
            }
            slot = (slot + 1) & mask;
        }
        keys[slot] = key;
        values[slot] = value + 1;
        if (++size > (mask + 1) / 2) {
            grow();
        }
        return -1;
    }

    /** The value of {@code key}, or -1. */
    public int get(long key) {
        int slot = slot(key);
        while (values[slot] != 0) {
            if (keys[slot] == key) {
                return values[slot] - 1;
            }
            slot = (slot + 1) & mask;
        }
        return -1;
    }

    public int size() {
        return size;
    }

    private int slot(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new int[oldValues.length * 2];
        mask = keys.length - 1;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != 0) {
                int slot = slot(oldKeys[i]);
                while (values[slot] != 0) {
                    slot = (slot + 1) & mask;
                }
                keys[slot] = oldKeys[i];
                values[slot] = oldValues[i];
            }
        }
    }
}
