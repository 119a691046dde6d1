package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Unit tests of the record header: encoding, sizes, parsing, corruption checks, layout bits. */
class RecordLayoutTest {

    private static final byte FILL = (byte) 0xA5;
    /** Room for any header (at most 1 + 3 + 5 + 7 + 8 bytes) at any tested offset. */
    private static final int SEGMENT_BYTES = 512;
    /** Shapes of a cache that learned none: every record has its lengths. */
    private static final RecordShapes NO_SHAPES = new RecordShapes();

    private static final int VARINT = RecordLayout.FORMAT_VARINT;

    @Provide
    Arbitrary<Integer> keyLengths() {
        return Arbitraries.oneOf(
                Arbitraries.of(1, 2, 127, 128, 129, 16_383, 16_384, 65_534, 65_535),
                Arbitraries.integers().between(1, RecordLayout.MAX_KEY_LENGTH));
    }

    @Provide
    Arbitrary<Integer> valueLengths() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        0,
                        1,
                        127,
                        128,
                        16_383,
                        16_384,
                        0x1F_FFFF,
                        0x20_0000,
                        0x0FFF_FFFF,
                        0x1000_0000,
                        Integer.MAX_VALUE - 1,
                        Integer.MAX_VALUE),
                Arbitraries.integers().between(0, Integer.MAX_VALUE));
    }

    @Property(tries = 2000)
    void headerRoundTrips(
            @ForAll("keyLengths") int keyLength,
            @ForAll("valueLengths") int valueLength,
            @ForAll boolean large,
            @ForAll boolean expires,
            @ForAll boolean fixedTtl,
            @ForAll @IntRange(min = 0, max = 255) int offset,
            @ForAll long deadline,
            @ForAll @IntRange(min = 0, max = 2) int shapesLearnedBefore) {
        if (!large) {
            // A record that holds its value inline lives in a page (at most 8 MiB); keep the
            // int arithmetic of the sizes meaningful.
            valueLength = Math.min(valueLength, Integer.MAX_VALUE - 100_000);
        }
        // A cache that learned 0, 1 or 2 other shapes first: the record is shaped (2, 3) or has
        // its lengths (1, and always when large).
        RecordShapes shapes = new RecordShapes();
        for (int i = 0; i < shapesLearnedBefore; i++) {
            shapes.formatFor(keyLength == 1 ? 2 : keyLength - 1, i, false);
        }
        int format = shapes.formatFor(keyLength, valueLength, large);
        assertThat(format)
                .isEqualTo(
                        large || shapesLearnedBefore == 2
                                ? RecordLayout.FORMAT_VARINT
                                : shapesLearnedBefore == 0 ? RecordLayout.FORMAT_SHAPE_0 : RecordLayout.FORMAT_SHAPE_1);
        assertThat(shapes.formatFor(keyLength, valueLength, large))
                .as("learned for good")
                .isEqualTo(format);
        boolean shaped = format != RecordLayout.FORMAT_VARINT;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            page.fill(FILL);

            long keyAt = RecordLayout.writeHeader(
                    page, offset, format, keyLength, valueLength, large, expires, fixedTtl, deadline);

            int keyOffset = RecordLayout.keyOffset(offset, format, keyLength, valueLength, expires);
            int size = RecordLayout.recordSize(offset, format, keyLength, valueLength, expires, large);
            assertThat(keyAt - offset).isEqualTo(keyOffset);
            assertThat(size).isEqualTo(keyOffset + keyLength + (large ? RecordLayout.EXTENT_ID_BYTES : valueLength));
            assertThat(size).isLessThanOrEqualTo(RecordLayout.maxRecordSize(keyLength, valueLength, expires, large));
            int lengthsEnd = RecordLayout.LENGTHS_OFFSET
                    + (shaped ? 0 : RecordLayout.varintSize(keyLength) + RecordLayout.varintSize(valueLength));
            if (expires) {
                // the deadline follows the lengths, padded to the next 8-byte boundary (0-7 bytes)
                assertThat(keyOffset - 8 - lengthsEnd).isBetween(0, 7);
                assertThat((offset + keyOffset - 8) % 8).isZero();
            } else {
                assertThat(keyOffset).isEqualTo(lengthsEnd);
            }

            // The varints take exactly varintSize bytes: continuation bits on all but the last.
            if (!shaped) {
                assertVarint(page, offset + RecordLayout.LENGTHS_OFFSET, keyLength);
                assertVarint(
                        page, offset + RecordLayout.LENGTHS_OFFSET + RecordLayout.varintSize(keyLength), valueLength);
            }

            // Nothing written before the record, in the padding, or from the key on.
            for (long i = 0; i < offset; i++) {
                assertThat(page.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(FILL);
            }
            long deadlineAt = expires ? offset + keyOffset - 8 : keyAt;
            for (long i = offset + lengthsEnd; i < deadlineAt; i++) {
                assertThat(page.get(ValueLayout.JAVA_BYTE, i))
                        .as("padding byte %d", i)
                        .isEqualTo(FILL);
            }
            for (long i = keyAt; i < SEGMENT_BYTES; i++) {
                assertThat(page.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(FILL);
            }

            int layout = RecordLayout.layout(page, offset);
            assertThat(layout & RecordLayout.FORMAT_MASK).isEqualTo(format);
            assertThat(layout & RecordLayout.DECIDED).isZero();
            assertThat(layout & RecordLayout.LARGE).isEqualTo(large ? RecordLayout.LARGE : 0);
            assertThat(layout & RecordLayout.EXPIRES).isEqualTo(expires ? RecordLayout.EXPIRES : 0);
            assertThat(layout & RecordLayout.FIXED_TTL).isEqualTo(fixedTtl ? RecordLayout.FIXED_TTL : 0);
            assertThat(RecordLayout.access(page, offset)).isZero();

            long end = (long) offset + size;
            RecordLayout.Header h = new RecordLayout.Header().parse(page, offset, end, shapes);
            assertThat(h.layout).isEqualTo(layout);
            assertThat(h.keyLength).isEqualTo(keyLength);
            assertThat(h.valueLength).isEqualTo(valueLength);
            assertThat(h.large()).isEqualTo(large);
            assertThat(h.expires()).isEqualTo(expires);
            assertThat(h.keyOffset).isEqualTo(keyAt);
            assertThat(h.valueOffset).isEqualTo(keyAt + keyLength);
            assertThat(h.end).isEqualTo(end);
            if (expires) {
                assertThat(h.deadlineOffset).isEqualTo(deadlineAt);
                assertThat(h.deadlineOffset % 8).isZero();
                assertThat(RecordLayout.readDeadline(page, h.deadlineOffset)).isEqualTo(deadline);
            } else {
                assertThat(h.deadlineOffset).isEqualTo(-1);
            }

            // One byte short of the record's end is a corrupt record.
            assertThatThrownBy(() -> new RecordLayout.Header().parse(page, offset, end - 1, shapes))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("offset " + offset);

            // Marking it decided and counting accesses changes nothing else the parser sees.
            RecordLayout.markDecided(page, offset);
            RecordLayout.recordAccess(page, offset);
            RecordLayout.Header again = new RecordLayout.Header().parse(page, offset, end, shapes);
            assertThat(again.layout).isEqualTo(layout | RecordLayout.DECIDED | (1 << RecordLayout.ACCESS_SHIFT));
            assertThat(again.keyOffset).isEqualTo(h.keyOffset);
            assertThat(again.end).isEqualTo(h.end);
            assertThat(again.keyLength).isEqualTo(keyLength);
            assertThat(again.valueLength).isEqualTo(valueLength);
        }
    }

    private static void assertVarint(MemorySegment page, long at, int value) {
        int n = RecordLayout.varintSize(value);
        long decoded = 0;
        for (int i = 0; i < n; i++) {
            int b = page.get(ValueLayout.JAVA_BYTE, at + i) & 0xFF;
            assertThat((b & 0x80) != 0)
                    .as("continuation bit of byte %d of %d", i, value)
                    .isEqualTo(i < n - 1);
            decoded |= (long) (b & 0x7F) << (7 * i);
        }
        assertThat(decoded).isEqualTo(value);
    }

    @Test
    void varintSizeBoundaries() {
        assertThat(RecordLayout.varintSize(0)).isEqualTo(1);
        assertThat(RecordLayout.varintSize(0x7F)).isEqualTo(1);
        assertThat(RecordLayout.varintSize(0x80)).isEqualTo(2);
        assertThat(RecordLayout.varintSize(0x3FFF)).isEqualTo(2);
        assertThat(RecordLayout.varintSize(0x4000)).isEqualTo(3);
        assertThat(RecordLayout.varintSize(0x1F_FFFF)).isEqualTo(3);
        assertThat(RecordLayout.varintSize(0x20_0000)).isEqualTo(4);
        assertThat(RecordLayout.varintSize(0x0FFF_FFFF)).isEqualTo(4);
        assertThat(RecordLayout.varintSize(0x1000_0000)).isEqualTo(5);
        assertThat(RecordLayout.varintSize(Integer.MAX_VALUE)).isEqualTo(5);
    }

    @Property(tries = 300)
    void deadlinePaddingDependsOnlyOnTheOffsetModulo8(
            @ForAll("keyLengths") int keyLength,
            @ForAll @IntRange(min = 0, max = 100_000) int valueLength,
            @ForAll @IntRange(min = 0, max = 1 << 20) int offset) {
        for (int format = RecordLayout.FORMAT_VARINT; format <= RecordLayout.FORMAT_SHAPE_1; format++) {
            int here = RecordLayout.recordSize(offset, format, keyLength, valueLength, true, false);
            int eightOn = RecordLayout.recordSize(offset + 8L, format, keyLength, valueLength, true, false);
            assertThat(here).isEqualTo(eightOn);
            // Without EXPIRES the size does not depend on the offset at all.
            assertThat(RecordLayout.recordSize(offset, format, keyLength, valueLength, false, false))
                    .isEqualTo(RecordLayout.recordSize(0, format, keyLength, valueLength, false, false));
        }
    }

    /** The key lands whole at its offset, and not one byte around it changes. */
    @Property(tries = 500)
    void copyKeyWritesExactlyTheKeysBytes(
            @ForAll @IntRange(min = 1, max = 40) int length, @ForAll @IntRange(min = 0, max = 57) int at) {
        byte[] key = new byte[length + 3]; // longer than the key: bytes past it must not be copied
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) (0x40 + i);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(128);
            page.fill((byte) 0x7F);
            RecordLayout.copyKey(key, page, at, length);
            for (int i = 0; i < 128; i++) {
                byte expected = i >= at && i < at + length ? key[i - at] : (byte) 0x7F;
                assertThat(page.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(expected);
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Padded records

    @Property(tries = 1000)
    void aPaddedRecordKeepsItsKeyAndEndWhateverItsValueLength(
            @ForAll @IntRange(min = 1, max = 300) int keyLength,
            @ForAll @IntRange(min = 0, max = 20_000) int capacity,
            @ForAll @IntRange(min = 0, max = 20_000) int first,
            @ForAll @IntRange(min = 0, max = 20_000) int second,
            @ForAll boolean expires,
            @ForAll @IntRange(min = 0, max = 255) int offset) {
        int firstLength = Math.min(first, capacity);
        int secondLength = Math.min(second, capacity);
        int padded = RecordLayout.FORMAT_PADDED;
        try (Arena arena = Arena.ofConfined()) {
            long bytes = offset + RecordLayout.maxPaddedRecordSize(keyLength, capacity, expires);
            MemorySegment page = arena.allocate(bytes, 8);
            page.fill(FILL);
            long keyAt = RecordLayout.writeHeader(
                    page, offset, padded, keyLength, firstLength, capacity, false, expires, false, 42);
            int size = RecordLayout.recordSize(offset, padded, keyLength, capacity, expires, false);
            assertThat(keyAt - offset).isEqualTo(RecordLayout.keyOffset(offset, padded, keyLength, capacity, expires));
            assertThat((long) offset + size).isLessThanOrEqualTo(bytes);
            RecordLayout.markDecided(page, offset);

            RecordLayout.Header h = new RecordLayout.Header().parse(page, offset, offset + size, NO_SHAPES);
            assertThat(h.padded()).isTrue();
            assertThat(h.keyLength).isEqualTo(keyLength);
            assertThat(h.keyOffset).isEqualTo(keyAt);
            assertThat(h.valueOffset).isEqualTo(keyAt + keyLength);
            assertThat(h.valueLength).isEqualTo(firstLength);
            assertThat(h.capacity).isEqualTo(capacity);
            assertThat(h.end).as("the end is the capacity's").isEqualTo(keyAt + keyLength + capacity);
            assertThat(h.end).isEqualTo(offset + size);
            if (expires) {
                assertThat(RecordLayout.readDeadline(page, h.deadlineOffset)).isEqualTo(42);
            }

            MemorySegment before = arena.allocate(bytes);
            before.copyFrom(page);
            RecordLayout.writeValueLength(page, h, secondLength);
            assertThat(h.valueLength).isEqualTo(secondLength);
            RecordLayout.Header again = new RecordLayout.Header().parse(page, offset, offset + size, NO_SHAPES);
            assertThat(again.valueLength).isEqualTo(secondLength);
            assertThat(again.keyOffset).isEqualTo(h.keyOffset);
            assertThat(again.end).isEqualTo(h.end);
            assertThat(again.capacity).isEqualTo(capacity);
            assertThat(again.deadlineOffset).isEqualTo(h.deadlineOffset);
            // Only the value length's bytes changed, and they keep their continuation bits: a
            // walker that reads the header mid-rewrite finds the same boundaries.
            long lengthEnd = h.valueLengthOffset + RecordLayout.varintSize(capacity);
            for (long i = 0; i < bytes; i++) {
                byte was = before.get(ValueLayout.JAVA_BYTE, i);
                byte is = page.get(ValueLayout.JAVA_BYTE, i);
                if (i < h.valueLengthOffset || i >= lengthEnd) {
                    assertThat(is).as("byte %d", i).isEqualTo(was);
                } else {
                    assertThat(is & 0x80).as("continuation bit of byte %d", i).isEqualTo(was & 0x80);
                }
            }
        }
    }

    /**
     * The evictor walks the log without the shard locks, so it may read a value length's digits
     * while an in-place rewrite changes them: any mix of the old and the new digits must parse,
     * with the record's key and end where they were (a walk that threw on a torn length once left
     * a cache evicting nearly everything).
     */
    @Property(tries = 1000)
    void aTornValueLengthStillParsesToTheSameBoundaries(
            @ForAll @IntRange(min = 1, max = 40) int keyLength,
            @ForAll @IntRange(min = 0, max = 20_000) int capacity,
            @ForAll @IntRange(min = 0, max = 20_000) int before,
            @ForAll @IntRange(min = 0, max = 20_000) int after,
            @ForAll @IntRange(min = 0, max = 7) int tornBytes) {
        int from = Math.min(before, capacity);
        int to = Math.min(after, capacity);
        int padded = RecordLayout.FORMAT_PADDED;
        try (Arena arena = Arena.ofConfined()) {
            long bytes = RecordLayout.maxPaddedRecordSize(keyLength, capacity, false);
            MemorySegment page = arena.allocate(bytes, 8);
            MemorySegment next = arena.allocate(bytes, 8);
            RecordLayout.writeHeader(page, 0, padded, keyLength, from, capacity, false, false, false, 0);
            RecordLayout.writeHeader(next, 0, padded, keyLength, to, capacity, false, false, false, 0);
            RecordLayout.markDecided(page, 0);
            RecordLayout.Header h = new RecordLayout.Header().parse(page, 0, bytes, NO_SHAPES);
            // The rewrite stores the digits one byte at a time: any of them may be new already.
            int width = RecordLayout.varintSize(capacity);
            for (int i = 0; i < width; i++) {
                if ((tornBytes >>> i & 1) != 0) {
                    long at = h.valueLengthOffset + i;
                    page.set(ValueLayout.JAVA_BYTE, at, next.get(ValueLayout.JAVA_BYTE, at));
                }
            }
            RecordLayout.Header torn = new RecordLayout.Header().parse(page, 0, bytes, NO_SHAPES);
            assertThat(torn.keyOffset).isEqualTo(h.keyOffset);
            assertThat(torn.keyLength).isEqualTo(keyLength);
            assertThat(torn.end).isEqualTo(h.end);
            assertThat(torn.capacity).isEqualTo(capacity);
            assertThat(torn.valueLength).isBetween(0, (1 << (7 * width)) - 1);
        }
    }

    @Test
    void aPaddedRecordParsesOnlyOnceDecided() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            RecordLayout.writeHeader(page, 8, RecordLayout.FORMAT_PADDED, 5, 10, 20, false, false, false, 0);
            assertThat(RecordLayout.layout(page, 8))
                    .as("an undecided padded record's layout byte")
                    .isZero();
            assertCorrupt(page, 8, SEGMENT_BYTES);
            RecordLayout.markDecided(page, 8);
            assertThat(new RecordLayout.Header().parse(page, 8, SEGMENT_BYTES, NO_SHAPES).capacity)
                    .isEqualTo(20);
        }
    }

    @Test
    void aPaddedRecordRefusesAValuePastItsCapacity() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            assertThatThrownBy(() -> RecordLayout.writeHeader(
                            page, 0, RecordLayout.FORMAT_PADDED, 5, 21, 20, false, false, false, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("value 21, capacity 20");
            assertThatThrownBy(() -> RecordLayout.writeHeader(
                            page, 0, RecordLayout.FORMAT_PADDED, 5, 8, 8, true, false, false, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("large");
            RecordLayout.writeHeader(page, 0, RecordLayout.FORMAT_PADDED, 5, 10, 200, false, false, false, 0);
            RecordLayout.markDecided(page, 0);
            RecordLayout.Header h = new RecordLayout.Header().parse(page, 0, SEGMENT_BYTES, NO_SHAPES);
            assertThatThrownBy(() -> RecordLayout.writeValueLength(page, h, 201))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("value length 201")
                    .hasMessageContaining("capacity 200");
            assertThat(new RecordLayout.Header().parse(page, 0, SEGMENT_BYTES, NO_SHAPES).valueLength)
                    .as("unchanged")
                    .isEqualTo(10);
            // A value length written in more bytes than the capacity's: not a padded record.
            writeRaw(page, 0, RecordLayout.DECIDED, 0x05, 0x8A, 0x00, 0x14);
            assertCorrupt(page, 0, SEGMENT_BYTES);
            // A capacity written in more bytes than it needs.
            writeRaw(page, 0, RecordLayout.DECIDED, 0x05, 0x0A, 0x94, 0x00);
            assertCorrupt(page, 0, SEGMENT_BYTES);
            // More value than capacity parses: a walk without the shard's lock can read an
            // in-place rewrite's digits torn, and only needs the key and the end, which hold.
            writeRaw(page, 0, RecordLayout.DECIDED, 0x05, 0x15, 0x14);
            RecordLayout.Header torn = new RecordLayout.Header().parse(page, 0, SEGMENT_BYTES, NO_SHAPES);
            assertThat(torn.end).isEqualTo(4 + 5 + 20);
            assertThat(torn.valueLength).isEqualTo(21);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Corruption

    @Property(tries = 200)
    void parseRejectsBadFormatBits(
            @ForAll @IntRange(min = 0, max = 255) int offset, @ForAll @IntRange(min = 0, max = 255) int layoutByte) {
        int format = layoutByte & RecordLayout.FORMAT_MASK;
        boolean padded = format == RecordLayout.FORMAT_PADDED
                && (layoutByte & RecordLayout.DECIDED) != 0
                && (layoutByte & RecordLayout.LARGE) == 0;
        if (format == RecordLayout.FORMAT_VARINT || padded) {
            // format 2: a shape, and this cache learned none (a decided small format 0 record is
            // padded, and may parse; undecided or large, it is corrupt)
            layoutByte = (layoutByte & ~RecordLayout.FORMAT_MASK) | RecordLayout.FORMAT_SHAPE_0;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            RecordLayout.writeHeader(page, offset, VARINT, 5, 5, false, false, false, 0);
            page.set(ValueLayout.JAVA_BYTE, offset, (byte) layoutByte);
            assertThatThrownBy(() -> new RecordLayout.Header().parse(page, offset, SEGMENT_BYTES, NO_SHAPES))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("offset " + offset);
        }
    }

    @Test
    void parseRejectsAZeroLayoutByte() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            assertThatThrownBy(() -> new RecordLayout.Header().parse(page, 40, SEGMENT_BYTES, NO_SHAPES))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("offset 40");
        }
    }

    @Test
    void parseRejectsBadLengths() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            for (int offset : new int[] {0, 1, 7, 8, 13, 100}) {
                // key length 0
                writeRaw(page, offset, VARINT, 0x00, 0x05);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // key length 65536 (past MAX_KEY_LENGTH)
                writeRaw(page, offset, VARINT, 0x80, 0x80, 0x04, 0x05);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // value length 0xFFFFFFFF (negative as an int)
                writeRaw(page, offset, VARINT, 0x05, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // an unterminated key length
                writeRaw(page, offset, VARINT, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // value past the limit
                RecordLayout.writeHeader(page, offset, VARINT, 10, 1000, false, false, false, 0);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // key past the limit
                RecordLayout.writeHeader(page, offset, VARINT, 1000, 0, false, true, false, 0);
                assertCorrupt(page, offset, SEGMENT_BYTES);
                // a large record's extent id past the limit
                RecordLayout.writeHeader(page, offset, VARINT, 4, 1 << 30, true, false, false, 0);
                long idEnd = offset + RecordLayout.recordSize(offset, VARINT, 4, 1 << 30, false, true);
                assertThat(new RecordLayout.Header().parse(page, offset, idEnd, NO_SHAPES).end)
                        .isEqualTo(idEnd);
                assertCorrupt(page, offset, idEnd - 1);
                page.fill((byte) 0);
            }
        }
    }

    private static void writeRaw(MemorySegment page, long offset, int... bytes) {
        for (int i = 0; i < bytes.length; i++) {
            page.set(ValueLayout.JAVA_BYTE, offset + i, (byte) bytes[i]);
        }
    }

    private static void assertCorrupt(MemorySegment page, long offset, long limit) {
        assertThatThrownBy(() -> new RecordLayout.Header().parse(page, offset, limit, NO_SHAPES))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("corrupt record at offset " + offset + ":");
    }

    // ---------------------------------------------------------------------------------------
    // Layout bits

    @Property(tries = 200)
    void accessBitsSaturateAtThreeAndLeaveTheOtherBitsAlone(
            @ForAll boolean large,
            @ForAll boolean expires,
            @ForAll boolean fixedTtl,
            @ForAll boolean decided,
            @ForAll @IntRange(min = 0, max = 255) int offset,
            @ForAll @IntRange(min = 0, max = 10) int reads) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            RecordLayout.writeHeader(page, offset, VARINT, 3, 9, large, expires, fixedTtl, 42);
            if (decided) {
                RecordLayout.markDecided(page, offset);
            }
            int others = RecordLayout.layout(page, offset);
            MemorySegment before = snapshot(page);
            for (int i = 1; i <= reads; i++) {
                RecordLayout.recordAccess(page, offset);
                assertThat(RecordLayout.access(page, offset)).isEqualTo(Math.min(i, RecordLayout.MAX_ACCESS));
                assertThat(RecordLayout.layout(page, offset) & ~RecordLayout.ACCESS_MASK)
                        .isEqualTo(others);
            }
            for (int access = RecordLayout.MAX_ACCESS; access >= 0; access--) {
                RecordLayout.setAccess(page, offset, access);
                assertThat(RecordLayout.access(page, offset)).isEqualTo(access);
                assertThat(RecordLayout.layout(page, offset) & ~RecordLayout.ACCESS_MASK)
                        .isEqualTo(others);
            }
            assertOnlyLayoutByteDiffers(before, page, offset);
        }
    }

    @Property(tries = 200)
    void markDecidedSetsOnlyDecided(
            @ForAll boolean large,
            @ForAll boolean expires,
            @ForAll boolean fixedTtl,
            @ForAll @IntRange(min = 0, max = 3) int access,
            @ForAll @IntRange(min = 0, max = 255) int offset) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            page.fill(FILL);
            RecordLayout.writeHeader(page, offset, VARINT, 300, 70_000, large, expires, fixedTtl, -7);
            RecordLayout.setAccess(page, offset, access);
            int before = RecordLayout.layout(page, offset);
            MemorySegment snapshot = snapshot(page);
            RecordLayout.markDecided(page, offset);
            assertThat(RecordLayout.layout(page, offset)).isEqualTo(before | RecordLayout.DECIDED);
            assertThat(before & RecordLayout.DECIDED).isZero();
            RecordLayout.markDecided(page, offset); // idempotent
            assertThat(RecordLayout.layout(page, offset)).isEqualTo(before | RecordLayout.DECIDED);
            assertOnlyLayoutByteDiffers(snapshot, page, offset);
        }
    }

    @Test
    void writeDeadlineReplacesOnlyTheDeadline() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(SEGMENT_BYTES, 8);
            for (int offset = 0; offset < 64; offset++) {
                RecordLayout.writeHeader(page, offset, VARINT, 20, 20, false, true, true, 1L);
                RecordLayout.Header h = new RecordLayout.Header().parse(page, offset, SEGMENT_BYTES, NO_SHAPES);
                MemorySegment before = snapshot(page);
                RecordLayout.writeDeadline(page, h.deadlineOffset, Long.MIN_VALUE + 3);
                assertThat(RecordLayout.readDeadline(page, h.deadlineOffset)).isEqualTo(Long.MIN_VALUE + 3);
                for (long i = 0; i < SEGMENT_BYTES; i++) {
                    if (i < h.deadlineOffset || i >= h.deadlineOffset + 8) {
                        assertThat(page.get(ValueLayout.JAVA_BYTE, i)).isEqualTo(before.get(ValueLayout.JAVA_BYTE, i));
                    }
                }
                page.fill((byte) 0);
            }
        }
    }

    private static MemorySegment snapshot(MemorySegment page) {
        return MemorySegment.ofArray(page.toArray(ValueLayout.JAVA_BYTE));
    }

    private static void assertOnlyLayoutByteDiffers(MemorySegment before, MemorySegment page, long offset) {
        for (long i = 0; i < page.byteSize(); i++) {
            if (i != offset + RecordLayout.LAYOUT_OFFSET) {
                assertThat(page.get(ValueLayout.JAVA_BYTE, i))
                        .as("byte %d", i)
                        .isEqualTo(before.get(ValueLayout.JAVA_BYTE, i));
            }
        }
    }
}
