package dev.larder.simulator.trace;

import java.util.Arrays;
import java.util.function.LongConsumer;

/** A growable {@code long[]}: collects a request sequence without boxing. */
public final class LongArrayBuilder implements LongConsumer {
    private long[] values;
    private int size;

    public LongArrayBuilder() {
        this(1 << 16);
    }

    public LongArrayBuilder(int initialCapacity) {
        values = new long[Math.max(16, initialCapacity)];
    }

    @Override
    public void accept(long value) {
        if (size == values.length) {
            if (size == Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("more than " + size + " requests");
            }
            values = Arrays.copyOf(values, (int) Math.min(Integer.MAX_VALUE - 8, 2L * size));
        }
        values[size++] = value;
    }

    public int size() {
        return size;
    }

    /** The values collected so far, in an array of exactly that length. */
    public long[] toArray() {
        return values.length == size ? values : Arrays.copyOf(values, size);
    }
}
