package dev.larder.internal.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A few longs that one thread writes often, on cache lines no other field shares: a {@code long[]}
 * with 128 bytes of unused elements on each side (a line and its adjacent-line prefetch pair), so
 * neither the array's header nor the objects allocated around it share their lines.
 *
 * <p>For a counter the evictor or the drain writes at every step, in an object whose other fields
 * every reader or writer of the cache reads: as a plain field next to them, each step took their
 * line from the other cores, and their next read waited for it (the sketch's additions, the
 * ghost lists' counts and the admission's random state; docs/speed-work.md, forty-first
 * session). One writer at a time: plain reads and writes, and a release/acquire pair for
 * readers on other threads; {@link #setBits} for flags that several threads set.
 */
public final class OwnLineLongs {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /** Unused longs on each side: 128 bytes. */
    private static final int PAD = 16;

    private final long[] values;
    private final int length;

    public OwnLineLongs(int length) {
        if (length <= 0) {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        this.length = length;
        this.values = new long[PAD + length + PAD];
    }

    public long get(int index) {
        return values[PAD + Objects.checkIndex(index, length)];
    }

    public void set(int index, long value) {
        values[PAD + Objects.checkIndex(index, length)] = value;
    }

    /** Adds {@code delta} and returns the new value (one writer: not atomic). */
    public long add(int index, long delta) {
        int i = PAD + Objects.checkIndex(index, length);
        return values[i] += delta;
    }

    /** Publishes a value for {@link #getAcquire} on other threads. */
    public void setRelease(int index, long value) {
        LONGS.setRelease(values, PAD + Objects.checkIndex(index, length), value);
    }

    /** Sets {@code bits} atomically, for flags that several threads set (and one clears). */
    public void setBits(int index, long bits) {
        LONGS.getAndBitwiseOr(values, PAD + Objects.checkIndex(index, length), bits);
    }

    public long getAcquire(int index) {
        return (long) LONGS.getAcquire(values, PAD + Objects.checkIndex(index, length));
    }
}
