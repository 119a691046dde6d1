package dev.larder.internal.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The binary layout of one entry's record in a page. Records are packed back to back with no
 * alignment, so a 16-byte key and a 32-byte value cost 51 bytes, not 56 or 64, and 49 when
 * the cache has learned their shape (see {@link RecordShapes}).
 *
 * <pre>
 *  offset  size  field
 *  0       1     layout    bit 7 DECIDED, bit 6 LARGE, bit 5 EXPIRES, bit 4 FIXED_TTL,
 *                          bits 2-3 ACCESS (recent reads, 0..3), bits 0-1 format:
 *                          1 = lengths follow as varints, 2 and 3 = the cache's first and
 *                          second learned shape (no lengths stored)
 *  1       1-3   keyLength    format 1 only: LEB128 varint, 1..{@value #MAX_KEY_LENGTH}
 *  .       1-5   valueLength  format 1 only: LEB128 varint, 0..2^31-1
 *  .       0-7   padding      only with EXPIRES: to the next 8-byte boundary
 *  .       8     deadline     only with EXPIRES: ticker nanos after which the entry is dead
 *  .       k     key bytes
 *  .       v|8   value bytes, or with LARGE the id of the extent that holds them
 * </pre>
 *
 * <p>The layout byte is written last, without DECIDED. The writer sets DECIDED under the
 * shard lock, before it publishes the index word (or when it abandons the record): the evictor
 * judges a record only after DECIDED and under the same lock, so it never retires a page that an
 * index word is about to point into. Readers bump ACCESS with a plain read-modify-write of the
 * layout byte; they can only reach a record after DECIDED is set, and the other bits never
 * change after that, so a lost race loses an access count, never a flag. The deadline is 8-byte aligned so readers that extend it (expire after access)
 * and readers that check it never see a torn value. Pages are zeroed before reuse, so a zero
 * layout byte means "reserved, not yet written".
 */
public final class RecordLayout {
    /** The lengths follow the layout byte as varints. */
    public static final int FORMAT_VARINT = 1;
    /** The record has the cache's first learned shape: no lengths stored. */
    public static final int FORMAT_SHAPE_0 = 2;
    /** The record has the cache's second learned shape: no lengths stored. */
    public static final int FORMAT_SHAPE_1 = 3;

    public static final int FORMAT_MASK = 0x03;
    public static final int ACCESS_SHIFT = 2;
    public static final int ACCESS_MASK = 0x0C;
    /** The entry has its own time to live: reads never extend it. */
    public static final int FIXED_TTL = 0x10;

    public static final int DECIDED = 0x80;
    public static final int LARGE = 0x40;
    public static final int EXPIRES = 0x20;

    public static final int LAYOUT_OFFSET = 0;
    public static final int LENGTHS_OFFSET = 1;
    public static final int MAX_ACCESS = 3;
    public static final int MAX_KEY_LENGTH = 65_535;
    public static final int EXTENT_ID_BYTES = 8;

    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    private static final VarHandle BYTE_HANDLE = BYTE.varHandle();
    private static final VarHandle DEADLINE = ValueLayout.JAVA_LONG.varHandle();
    /** A record's first 8 bytes, for parsing the header in one read. */
    private static final ValueLayout.OfLong HEAD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RecordLayout() {}

    /** Bytes a LEB128 varint of {@code value} takes. */
    public static int varintSize(int value) {
        if (value < 0x80) return 1;
        if (value < 0x4000) return 2;
        if (value < 0x20_0000) return 3;
        if (value < 0x1000_0000) return 4;
        return 5;
    }

    /** Bytes of the lengths after the layout byte: none for a shaped record. */
    private static int lengthsSize(int format, int keyLength, int valueLength) {
        return format == FORMAT_VARINT ? varintSize(keyLength) + varintSize(valueLength) : 0;
    }

    /**
     * Offset of the key from the record's start, for a record at {@code recordOffset} (which
     * fixes the deadline's padding).
     */
    public static int keyOffset(long recordOffset, int format, int keyLength, int valueLength, boolean expires) {
        int lengths = LENGTHS_OFFSET + lengthsSize(format, keyLength, valueLength);
        if (!expires) {
            return lengths;
        }
        return deadlineOffset(recordOffset, lengths) + 8;
    }

    private static int deadlineOffset(long recordOffset, int lengthsEnd) {
        long absolute = recordOffset + lengthsEnd;
        return (int) (((absolute + 7) & ~7L) - recordOffset);
    }

    /**
     * Upper bound of a record's size whatever its offset (padding assumed maximal) and format
     * (lengths stored).
     */
    public static int maxRecordSize(int keyLength, int valueLength, boolean expires, boolean large) {
        int size = LENGTHS_OFFSET + lengthsSize(FORMAT_VARINT, keyLength, valueLength) + keyLength;
        size += large ? EXTENT_ID_BYTES : valueLength;
        if (expires) {
            size += 7 + 8;
        }
        return size;
    }

    /** Exact size of a record placed at {@code recordOffset}. */
    public static int recordSize(
            long recordOffset, int format, int keyLength, int valueLength, boolean expires, boolean large) {
        return keyOffset(recordOffset, format, keyLength, valueLength, expires)
                + keyLength
                + (large ? EXTENT_ID_BYTES : valueLength);
    }

    /**
     * Writes the header (layout without DECIDED, access 0, lengths unless shaped, deadline) and
     * returns the key's absolute offset. A shaped {@code format} must be the one {@link
     * RecordShapes#formatFor} gave for these lengths.
     */
    public static long writeHeader(
            MemorySegment page,
            long offset,
            int format,
            int keyLength,
            int valueLength,
            boolean large,
            boolean expires,
            boolean fixedTtl,
            long deadline) {
        int layout = format | (large ? LARGE : 0) | (expires ? EXPIRES : 0) | (fixedTtl ? FIXED_TTL : 0);
        long p = offset + LENGTHS_OFFSET;
        if (format == FORMAT_VARINT) {
            p = writeVarint(page, p, keyLength);
            p = writeVarint(page, p, valueLength);
        } else if (format != FORMAT_SHAPE_0 && format != FORMAT_SHAPE_1) {
            throw new IllegalArgumentException("record format must be 1, 2 or 3: " + format);
        }
        long key = p;
        if (expires) {
            long deadlineAt = offset + deadlineOffset(offset, (int) (p - offset));
            DEADLINE.setRelease(page, deadlineAt, deadline);
            key = deadlineAt + 8;
        }
        BYTE_HANDLE.setRelease(page, offset + LAYOUT_OFFSET, (byte) layout);
        return key;
    }

    /** Marks the record decided: its index word is installed, or it was abandoned. */
    public static void markDecided(MemorySegment page, long offset) {
        byte layout = (byte) BYTE_HANDLE.getAcquire(page, offset + LAYOUT_OFFSET);
        BYTE_HANDLE.setRelease(page, offset + LAYOUT_OFFSET, (byte) (layout | DECIDED));
    }

    public static int layout(MemorySegment page, long offset) {
        return (byte) BYTE_HANDLE.getAcquire(page, offset + LAYOUT_OFFSET) & 0xFF;
    }

    /** Whether a layout byte's ACCESS bits are saturated ({@link #MAX_ACCESS}): a hot record. */
    public static boolean accessSaturated(int layout) {
        return (layout & ACCESS_MASK) == ACCESS_MASK;
    }

    public static int access(MemorySegment page, long offset) {
        return (page.get(BYTE, offset + LAYOUT_OFFSET) & ACCESS_MASK) >>> ACCESS_SHIFT;
    }

    /** Counts an access, saturating; skips the write when saturated so hot reads stay read-only. */
    public static void recordAccess(MemorySegment page, long offset) {
        int layout = page.get(BYTE, offset + LAYOUT_OFFSET);
        if ((layout & ACCESS_MASK) != ACCESS_MASK) {
            page.set(BYTE, offset + LAYOUT_OFFSET, (byte) (layout + (1 << ACCESS_SHIFT)));
        }
    }

    /** Sets the access count of a record that no reader can see yet. */
    public static void setAccess(MemorySegment page, long offset, int access) {
        int layout = page.get(BYTE, offset + LAYOUT_OFFSET) & ~ACCESS_MASK;
        page.set(BYTE, offset + LAYOUT_OFFSET, (byte) (layout | (access << ACCESS_SHIFT)));
    }

    public static long readDeadline(MemorySegment page, long deadlineOffset) {
        return (long) DEADLINE.getAcquire(page, deadlineOffset);
    }

    public static void writeDeadline(MemorySegment page, long deadlineOffset, long deadline) {
        DEADLINE.setRelease(page, deadlineOffset, deadline);
    }

    private static final VarHandle ARRAY_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** Keys longer than this are compared with {@link MemorySegment#mismatch} (vectorized). */
    private static final int WORDWISE_MAX = 64;

    /**
     * Whether {@code length} bytes of {@code page} at {@code at} equal {@code bytes[0, length)}:
     * word by word for short keys (no setup cost), vectorized for long ones.
     */
    public static boolean bytesEqual(MemorySegment page, long at, byte[] bytes, int length) {
        if (length > WORDWISE_MAX) {
            return MemorySegment.mismatch(page, at, at + length, MemorySegment.ofArray(bytes), 0, length) < 0;
        }
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            if (page.get(HEAD, at + i) != (long) ARRAY_LONG.get(bytes, i)) {
                return false;
            }
        }
        if (i == length) {
            return true;
        }
        if (length >= 8) { // the last, partial word: compare the 8 bytes that end the key
            return page.get(HEAD, at + length - 8) == (long) ARRAY_LONG.get(bytes, length - 8);
        }
        for (; i < length; i++) {
            if (page.get(BYTE, at + i) != bytes[i]) {
                return false;
            }
        }
        return true;
    }

    private static long writeVarint(MemorySegment page, long at, int value) {
        while ((value & ~0x7F) != 0) {
            page.set(BYTE, at++, (byte) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        page.set(BYTE, at++, (byte) value);
        return at;
    }

    /**
     * A parsed record header. Mutable and reused by one thread, so parsing allocates nothing.
     * Lengths come from native memory and are checked against the page before use.
     */
    public static final class Header {
        public int layout;
        public int keyLength;
        public int valueLength;
        /** Absolute offset of the deadline, or -1 without EXPIRES. */
        public long deadlineOffset;

        public long keyOffset;
        /** Absolute offset of the value bytes, or of the extent id with LARGE. */
        public long valueOffset;
        /** Absolute offset just past the record. */
        public long end;

        public boolean large() {
            return (layout & LARGE) != 0;
        }

        public boolean expires() {
            return (layout & EXPIRES) != 0;
        }

        /**
         * Parses the record at {@code offset}; {@code limit} is where the page's records end;
         * {@code shapes} are the cache's, for a shaped record's lengths.
         *
         * @throws IllegalStateException if the record is malformed (a bug, never user input)
         */
        public Header parse(MemorySegment page, long offset, long limit, RecordShapes shapes) {
            int k;
            int v;
            long p;
            if (offset + 8 <= page.byteSize()) {
                // The layout byte and both varints usually sit in the first 8 bytes: one bounds
                // check for all of them instead of one per byte.
                long w = page.get(HEAD, offset);
                layout = (int) w & 0xFF;
                int format = layout & FORMAT_MASK;
                if (format >= FORMAT_SHAPE_0) {
                    return shaped(offset, limit, shapes, format);
                }
                int at = 1;
                int b = (int) (w >>> 8) & 0xFF;
                k = b & 0x7F;
                for (int shift = 7; (b & 0x80) != 0 && at < 3; shift += 7) {
                    b = (int) (w >>> (++at << 3)) & 0xFF;
                    k |= (b & 0x7F) << shift;
                }
                if ((b & 0x80) == 0) {
                    b = (int) (w >>> (++at << 3)) & 0xFF;
                    v = b & 0x7F;
                    for (int shift = 7; (b & 0x80) != 0 && at < 7 && shift < 35; shift += 7) {
                        b = (int) (w >>> (++at << 3)) & 0xFF;
                        v |= (b & 0x7F) << shift;
                    }
                    if ((b & 0x80) == 0) {
                        checkFormat(offset);
                        return finish(offset, k, v, offset + at + 1, limit);
                    }
                }
            }
            layout = (byte) BYTE_HANDLE.getAcquire(page, offset + LAYOUT_OFFSET) & 0xFF;
            checkFormat(offset);
            int format = layout & FORMAT_MASK;
            if (format >= FORMAT_SHAPE_0) {
                return shaped(offset, limit, shapes, format);
            }
            p = offset + LENGTHS_OFFSET;
            k = 0;
            int shift = 0;
            int b;
            do {
                b = page.get(BYTE, p++);
                k |= (b & 0x7F) << shift;
                shift += 7;
            } while ((b & 0x80) != 0 && shift < 35);
            v = 0;
            shift = 0;
            do {
                b = page.get(BYTE, p++);
                v |= (b & 0x7F) << shift;
                shift += 7;
            } while ((b & 0x80) != 0 && shift < 35);
            return finish(offset, k, v, p, limit);
        }

        /**
         * Parses like {@link #parse}, but returns false instead of throwing for bytes that are not
         * a well-formed record (for callers that may point at any byte of a page).
         */
        public boolean tryParse(MemorySegment page, long offset, long limit, RecordShapes shapes) {
            try {
                parse(page, offset, limit, shapes);
                return true;
            } catch (IllegalStateException | IndexOutOfBoundsException notARecord) {
                return false;
            }
        }

        private void checkFormat(long offset) {
            if ((layout & FORMAT_MASK) == 0) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": layout byte " + layout);
            }
        }

        /** Sets the fields of a shaped record from its shape (none learned: corrupt). */
        private Header shaped(long offset, long limit, RecordShapes shapes, int format) {
            long shape = shapes.shape(format);
            if (shape == 0) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": layout byte " + layout
                        + " names a record shape the cache has not learned");
            }
            return finish(offset, (int) (shape >>> 32), (int) shape, offset + LENGTHS_OFFSET, limit);
        }

        /** Sets the fields from the lengths; {@code p} is just past the value length's varint. */
        private Header finish(long offset, int k, int v, long p, long limit) {
            keyLength = k;
            valueLength = v;
            if (expires()) {
                deadlineOffset = offset + deadlineOffset(offset, (int) (p - offset));
                keyOffset = deadlineOffset + 8;
            } else {
                deadlineOffset = -1;
                keyOffset = p;
            }
            valueOffset = keyOffset + k;
            end = valueOffset + (large() ? EXTENT_ID_BYTES : v);
            if (k <= 0 || k > MAX_KEY_LENGTH || v < 0 || end > limit) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": key length " + k
                        + ", value length " + v + ", end " + end + " past limit " + limit);
            }
            return this;
        }
    }
}
