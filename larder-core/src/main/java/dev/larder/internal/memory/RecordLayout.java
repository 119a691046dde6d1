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
 *                          second learned shape (no lengths stored), 0 (only with DECIDED) =
 *                          padded: lengths and the value's capacity follow as varints
 *  1       1-3   keyLength    formats 1 and 0: LEB128 varint, 1..{@value #MAX_KEY_LENGTH}
 *  .       1-5   valueLength  formats 1 and 0: LEB128 varint, 0..2^31-1; in format 0 always
 *                             as many bytes as the capacity's varint (zero-padded LEB128)
 *  .       1-5   capacity     format 0 only: LEB128 varint, valueLength..2^31-1
 *  .       0-7   padding      only with EXPIRES: to the next 8-byte boundary
 *  .       8     deadline     only with EXPIRES: ticker nanos after which the entry is dead
 *  .       k     key bytes
 *  .       v|8   value bytes, or with LARGE the id of the extent that holds them
 *  .       c-v   format 0 only: room for the value to grow into (never read)
 * </pre>
 *
 * <p><b>Padded records</b> (format 0) hold a value whose length changed: an overwrite of another
 * length appends its record padded to a capacity ({@code NativeCache#paddedCapacity}), and later
 * overwrites up to that capacity rewrite it in place, changing only the value's bytes and its
 * length's varint. The varint keeps its width, so every other byte of the header, the key's
 * offset and the record's end never change: the evictor, which walks the log without the shard's
 * lock, parses the same record boundaries and key before and after such a rewrite, and reads the
 * value's length again under the lock before it uses it. Format 0 is only ever read with
 * DECIDED set: an undecided record's layout byte may be 0 while it is written, as it reads on a
 * page not yet written.
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
    /**
     * Only with DECIDED: the lengths and the value's capacity follow the layout byte as varints
     * (a record that may be rewritten in place at another value length; see above).
     */
    public static final int FORMAT_PADDED = 0;
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

    /**
     * Bytes of the lengths after the layout byte: none for a shaped record; for a padded one
     * ({@code valueLength} is then its capacity) the key's length, the value's and the capacity.
     */
    private static int lengthsSize(int format, int keyLength, int valueLength) {
        return switch (format) {
            case FORMAT_VARINT -> varintSize(keyLength) + varintSize(valueLength);
            case FORMAT_PADDED -> varintSize(keyLength) + 2 * varintSize(valueLength);
            default -> 0;
        };
    }

    /**
     * Offset of the key from the record's start, for a record at {@code recordOffset} (which
     * fixes the deadline's padding). For {@link #FORMAT_PADDED}, {@code valueLength} is the
     * value's capacity, as in {@link #recordSize}.
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

    /**
     * Upper bound of a padded record's size with room for {@code capacity} value bytes,
     * whatever its offset.
     */
    public static int maxPaddedRecordSize(int keyLength, int capacity, boolean expires) {
        return maxRecordSize(keyLength, capacity, expires, false) + varintSize(capacity);
    }

    /**
     * Exact size of a record placed at {@code recordOffset}; for {@link #FORMAT_PADDED}, {@code
     * valueLength} is the value's capacity.
     */
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
        return writeHeader(
                page, offset, format, keyLength, valueLength, valueLength, large, expires, fixedTtl, deadline);
    }

    /**
     * {@link #writeHeader(MemorySegment, long, int, int, int, boolean, boolean, boolean, long)}
     * with the value's {@code capacity}, which only {@link #FORMAT_PADDED} stores (and which must
     * then be at least {@code valueLength}; a padded record is never large).
     */
    public static long writeHeader(
            MemorySegment page,
            long offset,
            int format,
            int keyLength,
            int valueLength,
            int capacity,
            boolean large,
            boolean expires,
            boolean fixedTtl,
            long deadline) {
        int layout = format | (large ? LARGE : 0) | (expires ? EXPIRES : 0) | (fixedTtl ? FIXED_TTL : 0);
        long p = offset + LENGTHS_OFFSET;
        if (format == FORMAT_VARINT) {
            p = writeVarint(page, p, keyLength);
            p = writeVarint(page, p, valueLength);
        } else if (format == FORMAT_PADDED) {
            if (large || valueLength < 0 || capacity < valueLength) {
                throw new IllegalArgumentException("a padded record holds a small value of at most its capacity: value "
                        + valueLength + ", capacity " + capacity + (large ? ", large" : ""));
            }
            p = writeVarint(page, p, keyLength);
            int width = varintSize(capacity);
            writeVarintOfWidth(page, p, valueLength, width);
            p = writeVarint(page, p + width, capacity);
        } else if (format != FORMAT_SHAPE_0 && format != FORMAT_SHAPE_1) {
            throw new IllegalArgumentException("record format must be 0, 1, 2 or 3: " + format);
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

    /**
     * Sets the value length of the padded record parsed into {@code h} (its value's bytes are the
     * caller's to write): the varint keeps its width, so nothing else in the record moves.
     */
    public static void writeValueLength(MemorySegment page, Header h, int valueLength) {
        if (!h.padded() || valueLength < 0 || valueLength > h.capacity) {
            throw new IllegalArgumentException("value length " + valueLength + " does not fit the record at "
                    + h.valueLengthOffset + " (capacity " + h.capacity + (h.padded() ? "" : ", not padded") + ")");
        }
        writeVarintOfWidth(page, h.valueLengthOffset, valueLength, varintSize(h.capacity));
        h.valueLength = valueLength;
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

    /**
     * Lowers a record's access count by one (the evictor's second chance for a record that stays
     * where it is). A plain read-modify-write, as readers' {@link #recordAccess}: a race loses a
     * count, never a flag.
     */
    public static void lowerAccess(MemorySegment page, long offset) {
        int layout = page.get(BYTE, offset + LAYOUT_OFFSET);
        if ((layout & ACCESS_MASK) != 0) {
            page.set(BYTE, offset + LAYOUT_OFFSET, (byte) (layout - (1 << ACCESS_SHIFT)));
        }
    }

    /**
     * Sets a record's access count: of a copy no reader can see yet, or of a record that stays
     * where it is (the evictor clearing a page of the window's counts as it goes round whole). A
     * plain read-modify-write, as readers' {@link #recordAccess}: a race loses a count, never a flag.
     */
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
        if (length >= 8 && length <= 16) {
            // The first and the last 8 bytes (overlapping below 16): no loop, whose counter and
            // safepoint poll were a third of the comparison of a 16-byte key.
            return page.get(HEAD, at) == (long) ARRAY_LONG.get(bytes, 0)
                    && page.get(HEAD, at + length - 8) == (long) ARRAY_LONG.get(bytes, length - 8);
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

    /**
     * Copies {@code bytes[0, length)} to {@code page} at {@code at}: a key of 8 to 16 bytes as its
     * first and last 8 bytes (overlapping below 16), two stores with no set-up, where {@code
     * MemorySegment.copy}'s checks and call cost more than the copy (docs/speed-work.md,
     * fifty-third session); any other length through {@code MemorySegment.copy}.
     */
    public static void copyKey(byte[] bytes, MemorySegment page, long at, int length) {
        if (length >= 8 && length <= 16) {
            page.set(HEAD, at, (long) ARRAY_LONG.get(bytes, 0));
            page.set(HEAD, at + length - 8, (long) ARRAY_LONG.get(bytes, length - 8));
        } else {
            MemorySegment.copy(bytes, 0, page, BYTE, at, length);
        }
    }

    /** Writes {@code value} as a LEB128 varint of exactly {@code width} bytes (zero-padded). */
    private static void writeVarintOfWidth(MemorySegment page, long at, int value, int width) {
        for (int i = 0; i < width - 1; i++) {
            page.set(BYTE, at + i, (byte) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        page.set(BYTE, at + width - 1, (byte) value);
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
        /** Value bytes the record has room for: {@link #valueLength} unless padded. */
        public int capacity;
        /** Absolute offset of a padded record's value length varint, or -1. */
        public long valueLengthOffset;
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

        /** Whether the record is {@link #FORMAT_PADDED}: its value may change length in place. */
        public boolean padded() {
            return (layout & FORMAT_MASK) == FORMAT_PADDED;
        }

        /**
         * Parses the record at {@code offset}; {@code limit} is where the page's records end;
         * {@code shapes} are the cache's, for a shaped record's lengths.
         *
         * @throws IllegalStateException if the record is malformed (a bug, never user input)
         */
        public Header parse(MemorySegment page, long offset, long limit, RecordShapes shapes) {
            if (offset + 8 <= page.byteSize()) {
                // The layout byte and both varints usually sit in the first 8 bytes: one bounds
                // check for all of them instead of one per byte.
                long w = page.get(HEAD, offset);
                layout = (int) w & 0xFF;
                int format = layout & FORMAT_MASK;
                if (format >= FORMAT_SHAPE_0) {
                    return shaped(offset, limit, shapes, format);
                }
                return parseLengths(page, offset, limit, shapes, w);
            }
            return parseNearEnd(page, offset, limit, shapes);
        }

        /**
         * {@link #parse} of a record whose first 8 bytes {@code w} are not a learned shape's:
         * kept apart so that {@link #parse}, small, is inlined into the lookups that mostly meet
         * shaped records.
         */
        private Header parseLengths(MemorySegment page, long offset, long limit, RecordShapes shapes, long w) {
            if ((layout & FORMAT_MASK) == FORMAT_PADDED) {
                return padded(page, offset, limit);
            }
            int at = 1;
            int b = (int) (w >>> 8) & 0xFF;
            int k = b & 0x7F;
            for (int shift = 7; (b & 0x80) != 0 && at < 3; shift += 7) {
                b = (int) (w >>> (++at << 3)) & 0xFF;
                k |= (b & 0x7F) << shift;
            }
            if ((b & 0x80) == 0) {
                b = (int) (w >>> (++at << 3)) & 0xFF;
                int v = b & 0x7F;
                for (int shift = 7; (b & 0x80) != 0 && at < 7 && shift < 35; shift += 7) {
                    b = (int) (w >>> (++at << 3)) & 0xFF;
                    v |= (b & 0x7F) << shift;
                }
                if ((b & 0x80) == 0) {
                    return finish(offset, k, v, v, offset + at + 1, limit);
                }
            }
            return parseNearEnd(page, offset, limit, shapes);
        }

        /** {@link #parse} byte by byte: a record within 8 bytes of its page's end, or long lengths. */
        private Header parseNearEnd(MemorySegment page, long offset, long limit, RecordShapes shapes) {
            int k;
            int v;
            long p;
            layout = (byte) BYTE_HANDLE.getAcquire(page, offset + LAYOUT_OFFSET) & 0xFF;
            int format = layout & FORMAT_MASK;
            if (format >= FORMAT_SHAPE_0) {
                return shaped(offset, limit, shapes, format);
            }
            if (format == FORMAT_PADDED) {
                return padded(page, offset, limit);
            }
            p = offset + LENGTHS_OFFSET;
            k = readVarint(page, p);
            p = varintEnd;
            v = readVarint(page, p);
            return finish(offset, k, v, v, varintEnd, limit);
        }

        /** Where the last {@link #readVarint} ended (absolute), so that reading allocates nothing. */
        private long varintEnd;

        private int readVarint(MemorySegment page, long p) {
            int value = 0;
            int shift = 0;
            int b;
            do {
                b = page.get(BYTE, p++);
                value |= (b & 0x7F) << shift;
                shift += 7;
            } while ((b & 0x80) != 0 && shift < 35);
            varintEnd = p;
            return value;
        }

        /** Parses a {@link #FORMAT_PADDED} record, whose layout byte is in {@link #layout}. */
        private Header padded(MemorySegment page, long offset, long limit) {
            if ((layout & DECIDED) == 0 || (layout & LARGE) != 0) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": layout byte " + layout);
            }
            int k = readVarint(page, offset + LENGTHS_OFFSET);
            long lengthAt = varintEnd;
            int v = readVarint(page, lengthAt);
            long capacityAt = varintEnd;
            int c = readVarint(page, capacityAt);
            // Only the structure is checked: a reader without the shard's lock (the evictor's
            // walk, an optimistic read) may see an in-place rewrite's digits torn, a length that
            // is neither the old nor the new one, even one past the capacity. The widths, the
            // key and the end never change, so the walk is safe; whoever uses the length reads it
            // under the lock (or validates the seqlock), and writers keep it within the capacity.
            int width = varintSize(c);
            if (capacityAt - lengthAt != width || varintEnd - capacityAt != width) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": value length " + v + " in "
                        + (capacityAt - lengthAt) + " bytes, capacity " + c + " in " + (varintEnd - capacityAt));
            }
            finish(offset, k, v, c, varintEnd, limit);
            valueLengthOffset = lengthAt;
            return this;
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

        /** Sets the fields of a shaped record from its shape (none learned: corrupt). */
        private Header shaped(long offset, long limit, RecordShapes shapes, int format) {
            long shape = shapes.shape(format);
            if (shape == 0) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": layout byte " + layout
                        + " names a record shape the cache has not learned");
            }
            return finish(offset, (int) (shape >>> 32), (int) shape, (int) shape, offset + LENGTHS_OFFSET, limit);
        }

        /**
         * Sets the fields from the lengths and the value's capacity {@code c}; {@code p} is just
         * past the lengths.
         */
        private Header finish(long offset, int k, int v, int c, long p, long limit) {
            keyLength = k;
            valueLength = v;
            capacity = c;
            valueLengthOffset = -1;
            if (expires()) {
                deadlineOffset = offset + deadlineOffset(offset, (int) (p - offset));
                keyOffset = deadlineOffset + 8;
            } else {
                deadlineOffset = -1;
                keyOffset = p;
            }
            valueOffset = keyOffset + k;
            end = valueOffset + (large() ? EXTENT_ID_BYTES : c);
            if (k <= 0 || k > MAX_KEY_LENGTH || v < 0 || end > limit) {
                throw new IllegalStateException("corrupt record at offset " + offset + ": key length " + k
                        + ", value length " + v + ", end " + end + " past limit " + limit);
            }
            return this;
        }
    }
}
