package dev.larder.internal.memory;

import dev.larder.internal.concurrent.FieldHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The two record shapes (key length, value length) a cache learns from its first writes. A
 * record of a learned shape stores no lengths: its layout byte's format says which shape it
 * has ({@link RecordLayout#FORMAT_SHAPE_0}, {@link RecordLayout#FORMAT_SHAPE_1}), which saves
 * the two varints, 2 to 4 bytes a record. Caches of fixed-size keys and values (numbers, UUIDs,
 * hashes, fixed structs) are the common case off the heap, and at small values those bytes are
 * a tenth of the overhead per entry.
 *
 * <p>The first two distinct shapes of small values written are taken, once and for good (a
 * shape can never change while a record may use it); every other shape keeps its varints. A
 * shape is published by a CAS before any record of it is written, and a record is reached only
 * through an index word or a DECIDED layout byte published after it, so whoever parses a
 * record sees its shape.
 */
public final class RecordShapes {
    private static final VarHandle FIRST = FieldHandles.of(MethodHandles.lookup(), "first", long.class);
    private static final VarHandle SECOND = FieldHandles.of(MethodHandles.lookup(), "second", long.class);

    /** {@code keyLength << 32 | valueLength}, or 0 while not learned (a key is never empty). */
    private volatile long first;

    private volatile long second;

    /**
     * The format a record of these lengths is written in, learning the shape if a slot is free:
     * a shape's format, or {@link RecordLayout#FORMAT_VARINT}.
     */
    public int formatFor(int keyLength, int valueLength, boolean large) {
        if (large || keyLength <= 0 || valueLength < 0) {
            return RecordLayout.FORMAT_VARINT;
        }
        long shape = ((long) keyLength << 32) | valueLength;
        long f = first;
        if (f == shape || (f == 0 && (FIRST.compareAndSet(this, 0L, shape) || first == shape))) {
            return RecordLayout.FORMAT_SHAPE_0;
        }
        long s = second;
        if (s == shape || (s == 0 && (SECOND.compareAndSet(this, 0L, shape) || second == shape))) {
            return RecordLayout.FORMAT_SHAPE_1;
        }
        return RecordLayout.FORMAT_VARINT;
    }

    /** The shape of a shaped format: {@code keyLength << 32 | valueLength}, 0 if not learned. */
    long shape(int format) {
        return format == RecordLayout.FORMAT_SHAPE_0 ? first : second;
    }

    @Override
    public String toString() {
        return "RecordShapes[" + describe(first) + ", " + describe(second) + "]";
    }

    private static String describe(long shape) {
        return shape == 0 ? "-" : (shape >>> 32) + "+" + (int) shape;
    }
}
