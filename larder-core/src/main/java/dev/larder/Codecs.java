package dev.larder;

import dev.larder.internal.TrustedCodec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Ready-made {@link Codec codecs} for common key and value types.
 *
 * <p>Every factory returns a stateless, thread-safe singleton, so {@code Codecs.utf8() ==
 * Codecs.utf8()}. All codecs reject a {@code null} value with a {@link NullPointerException} whose
 * message names the codec, and every {@code read} checks that {@code [offset, offset + length)}
 * lies inside the source segment before touching it, throwing {@link IndexOutOfBoundsException}
 * otherwise (including for a negative length). Writing into a read-only segment throws {@link
 * IllegalArgumentException}, as {@link MemorySegment} does.
 *
 * <p>Values returned by {@code read} never refer to the source segment: they are fresh heap copies,
 * so they stay valid after the cache reuses the memory.
 */
public final class Codecs {

    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;

    /** Big-endian so that the first byte is the most significant one. */
    private static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Big-endian so that the first byte is the most significant one. */
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final VarHandle BIG_ENDIAN_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle BIG_ENDIAN_INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private Codecs() {}

    /**
     * Returns a codec storing a {@link String} as UTF-8.
     *
     * <p>The bytes are exactly those of {@code value.getBytes(StandardCharsets.UTF_8)}: a
     * supplementary character (a valid surrogate pair) takes four bytes, and an unpaired surrogate
     * is written as {@code '?'} (one byte, {@code 0x3F}), as the JDK does. {@code size} and {@code
     * write} do not allocate: they walk the string's chars and encode straight into the segment.
     *
     * <p>{@code read} decodes like {@code new String(bytes, StandardCharsets.UTF_8)}: malformed
     * input is replaced by {@code U+FFFD} rather than rejected, so it never throws for the content of
     * the bytes.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null.
     * <li>{@code size}: {@link IllegalArgumentException} if the encoding is longer than {@link
     *     Integer#MAX_VALUE} bytes.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IndexOutOfBoundsException} if {@code [offset, offset + length)} is
     *     not inside {@code source}, including a negative {@code length}.
     * </ul>
     *
     * @return the UTF-8 string codec
     */
    public static Codec<String> utf8() {
        return Utf8Codec.INSTANCE;
    }

    /**
     * Returns a codec storing a {@link String} as ISO-8859-1 (Latin-1), one byte per char.
     *
     * <p>Only chars {@code U+0000} to {@code U+00FF} are accepted. For those strings the bytes are
     * exactly those of {@code value.getBytes(StandardCharsets.ISO_8859_1)}; any other string is
     * rejected rather than silently altered. {@code size} and {@code write} do not allocate. Every
     * byte is a valid Latin-1 char, so {@code read} never rejects its input.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null; {@link
     *     IllegalArgumentException} naming the first char above {@code U+00FF} and its index, for
     *     example {@code "latin1 codec: char U+20AC at index 3 is not Latin-1"}. {@code write} checks
     *     the whole string before writing anything.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IndexOutOfBoundsException} if {@code [offset, offset + length)} is
     *     not inside {@code source}, including a negative {@code length}.
     * </ul>
     *
     * @return the Latin-1 string codec
     */
    public static Codec<String> latin1() {
        return Latin1Codec.INSTANCE;
    }

    /**
     * Returns a codec storing a {@link Long} in 8 bytes whose unsigned lexicographic order is the
     * numeric order of the values.
     *
     * <p>The value is written big-endian with its sign bit flipped ({@code value ^ Long.MIN_VALUE}),
     * so {@code Long.MIN_VALUE} is {@code 00 00 00 00 00 00 00 00}, {@code 0} is {@code 80 00 00 00
     * 00 00 00 00} and {@code Long.MAX_VALUE} is {@code FF FF FF FF FF FF FF FF}. Comparing two
     * encodings byte by byte as unsigned numbers therefore orders them as the longs they encode,
     * negative values included.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IllegalArgumentException} naming the expected and the actual length if
     *     {@code length} is not 8; {@link IndexOutOfBoundsException} if the 8 bytes are not inside
     *     {@code source}.
     * </ul>
     *
     * @return the long codec
     */
    public static Codec<Long> longs() {
        return LongCodec.INSTANCE;
    }

    /**
     * Returns a codec storing an {@link Integer} in 4 bytes whose unsigned lexicographic order is the
     * numeric order of the values.
     *
     * <p>The value is written big-endian with its sign bit flipped ({@code value ^
     * Integer.MIN_VALUE}), so {@code Integer.MIN_VALUE} is {@code 00 00 00 00}, {@code 0} is {@code
     * 80 00 00 00} and {@code Integer.MAX_VALUE} is {@code FF FF FF FF}.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IllegalArgumentException} naming the expected and the actual length if
     *     {@code length} is not 4; {@link IndexOutOfBoundsException} if the 4 bytes are not inside
     *     {@code source}.
     * </ul>
     *
     * @return the int codec
     */
    public static Codec<Integer> ints() {
        return IntCodec.INSTANCE;
    }

    /**
     * Returns a codec storing a {@code byte[]} as its own bytes.
     *
     * <p>{@code write} copies the whole array; {@code read} returns a new array of {@code length}
     * bytes. The codec never keeps a reference to the array it is given.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IndexOutOfBoundsException} if {@code [offset, offset + length)} is
     *     not inside {@code source}, including a negative {@code length}.
     * </ul>
     *
     * @return the byte array codec
     */
    public static Codec<byte[]> bytes() {
        return BytesCodec.INSTANCE;
    }

    /**
     * Returns a codec storing the remaining bytes of a {@link ByteBuffer}.
     *
     * <p>{@code size} is {@code value.remaining()} and {@code write} copies the bytes between the
     * buffer's position and its limit, without changing the position, limit or mark; heap, direct
     * and read-only buffers are all accepted. {@code read} returns a new heap buffer with position
     * {@code 0}, limit and capacity {@code length}, and the default big-endian byte order.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only.
     * <li>{@code read}: {@link IndexOutOfBoundsException} if {@code [offset, offset + length)} is
     *     not inside {@code source}, including a negative {@code length}.
     * </ul>
     *
     * @return the byte buffer codec
     */
    public static Codec<ByteBuffer> byteBuffers() {
        return ByteBufferCodec.INSTANCE;
    }

    /**
     * Returns a codec storing all the bytes of a {@link MemorySegment}.
     *
     * <p>{@code read} returns a new heap segment ({@code MemorySegment.ofArray(new byte[length])})
     * holding a copy of the bytes, never a view of the source, so it stays valid after the cache
     * reuses its memory.
     *
     * <p>The returned codec throws:
     *
     * <ul>
     * <li>{@code size}, {@code write}: {@link NullPointerException} if the value is null; {@link
     *     IllegalArgumentException} naming the size if the segment is larger than {@link
     *     Integer#MAX_VALUE} bytes.
     * <li>{@code write}: {@link IndexOutOfBoundsException} if the bytes do not fit in {@code target}
     *     at {@code offset}, checked before any byte is written; {@link IllegalArgumentException} if
     *     {@code target} is read-only; {@link IllegalStateException} if the value's arena is closed or
     *     confined to another thread.
     * <li>{@code read}: {@link IndexOutOfBoundsException} if {@code [offset, offset + length)} is
     *     not inside {@code source}, including a negative {@code length}.
     * </ul>
     *
     * @return the memory segment codec
     */
    public static Codec<MemorySegment> segments() {
        return SegmentCodec.INSTANCE;
    }

    // ------------------------------------------------------------------------------------------

    /** Checks a read range, before anything is allocated; negative lengths are rejected too. */
    private static void checkRange(MemorySegment source, long offset, int length) {
        Objects.checkFromIndexSize(offset, length, source.byteSize());
    }

    /** Copies {@code length} bytes of {@code source} at {@code offset} into a new array. */
    private static byte[] copyOut(MemorySegment source, long offset, int length) {
        checkRange(source, offset, length);
        byte[] bytes = new byte[length];
        MemorySegment.copy(source, BYTE, offset, bytes, 0, length);
        return bytes;
    }

    private static final VarHandle LITTLE_ENDIAN_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * Stores the chars of {@code s} below {@code limit} (0x80 for UTF-8, 0x100 for Latin-1) as one
     * byte each at the start of {@code target}, eight at a time with one long store, up to the
     * first group of eight holding another char; returns how many were stored. Long stores matter:
     * the key is read back at once as longs (hashed, compared), and a long load that needs eight
     * separate byte stores still in flight cannot be forwarded from them and waits (measured: 28
     * ns of a 150 ns lookup).
     */
    private static int asciiPrefix(String s, int n, byte[] target, int limit) {
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            long word = 0;
            int seen = 0;
            for (int j = 7; j >= 0; j--) {
                char c = s.charAt(i + j);
                seen |= c;
                word = (word << 8) | c;
            }
            if (seen >= limit) {
                return i;
            }
            LITTLE_ENDIAN_LONG.set(target, i, word);
        }
        return i;
    }

    private static IllegalArgumentException wrongLength(String codec, int expected, int actual) {
        return new IllegalArgumentException(codec + " codec: expected " + expected + " bytes, got " + actual);
    }

    private static final class Utf8Codec implements Codec<String>, TrustedCodec<String> {
        static final Utf8Codec INSTANCE = new Utf8Codec();

        @Override
        public int size(String value) {
            Objects.requireNonNull(value, "utf8 codec: value is null");
            long size = encodedLength(value);
            if (size > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("utf8 codec: encoded length " + size + " exceeds Integer.MAX_VALUE");
            }
            return (int) size;
        }

        /** The UTF-8 length of {@code s}, as {@code s.getBytes(UTF_8).length} would be. */
        private static long encodedLength(String s) {
            int n = s.length();
            int i = 0;
            while (i < n && s.charAt(i) < 0x80) {
                i++;
            }
            long size = i;
            for (; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    size += 1;
                } else if (c < 0x800) {
                    size += 2;
                } else if (!Character.isSurrogate(c)) {
                    size += 3;
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    size += 4; // a valid pair: one supplementary code point
                    i++;
                } else {
                    size += 1; // an unpaired surrogate becomes '?'
                }
            }
            return size;
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "utf8 codec: value is null");
            int n = value.length();
            long limit = target.byteSize();
            // Each char takes at most 3 bytes (a 4-byte pair spans two chars), so when 3 bytes per
            // char fit, the encoding fits. Otherwise measure exactly, so that nothing is written
            // when the encoding does not fit.
            if (offset < 0 || offset > limit || limit - offset < 3L * n) {
                Objects.checkFromIndexSize(offset, encodedLength(value), limit);
            }
            encode(value, target, offset);
        }

        @Override
        public long maxEncodedSize(String value) {
            return 3L * value.length(); // a 4-byte pair spans two chars
        }

        @Override
        public int encodeKey(String value, byte[] target) {
            int n = value.length();
            int i = asciiPrefix(value, n, target, 0x80);
            int p = i;
            for (; i < n; i++) {
                char c = value.charAt(i);
                if (c < 0x80) {
                    target[p++] = (byte) c;
                } else if (c < 0x800) {
                    target[p++] = (byte) (0xC0 | (c >> 6));
                    target[p++] = (byte) (0x80 | (c & 0x3F));
                } else if (!Character.isSurrogate(c)) {
                    target[p++] = (byte) (0xE0 | (c >> 12));
                    target[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    target[p++] = (byte) (0x80 | (c & 0x3F));
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(value.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, value.charAt(++i));
                    target[p++] = (byte) (0xF0 | (cp >> 18));
                    target[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    target[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    target[p++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    target[p++] = (byte) '?';
                }
            }
            return p;
        }

        /** Encodes into a segment with room for it (checked by the caller). */
        private static void encode(String value, MemorySegment target, long offset) {
            int n = value.length();
            long p = offset;
            int i = 0;
            for (; i < n; i++) { // ASCII fast path
                char c = value.charAt(i);
                if (c >= 0x80) {
                    break;
                }
                target.set(BYTE, p++, (byte) c);
            }
            for (; i < n; i++) {
                char c = value.charAt(i);
                if (c < 0x80) {
                    target.set(BYTE, p++, (byte) c);
                } else if (c < 0x800) {
                    target.set(BYTE, p++, (byte) (0xC0 | (c >> 6)));
                    target.set(BYTE, p++, (byte) (0x80 | (c & 0x3F)));
                } else if (!Character.isSurrogate(c)) {
                    target.set(BYTE, p++, (byte) (0xE0 | (c >> 12)));
                    target.set(BYTE, p++, (byte) (0x80 | ((c >> 6) & 0x3F)));
                    target.set(BYTE, p++, (byte) (0x80 | (c & 0x3F)));
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(value.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, value.charAt(++i));
                    target.set(BYTE, p++, (byte) (0xF0 | (cp >> 18)));
                    target.set(BYTE, p++, (byte) (0x80 | ((cp >> 12) & 0x3F)));
                    target.set(BYTE, p++, (byte) (0x80 | ((cp >> 6) & 0x3F)));
                    target.set(BYTE, p++, (byte) (0x80 | (cp & 0x3F)));
                } else {
                    target.set(BYTE, p++, (byte) '?');
                }
            }
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            return new String(copyOut(source, offset, length), StandardCharsets.UTF_8);
        }

        @Override
        public boolean infallibleWrite() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.utf8()";
        }
    }

    private static final class Latin1Codec implements Codec<String>, TrustedCodec<String> {
        static final Latin1Codec INSTANCE = new Latin1Codec();

        @Override
        public int size(String value) {
            Objects.requireNonNull(value, "latin1 codec: value is null");
            checkLatin1(value);
            return value.length();
        }

        private static void checkLatin1(String s) {
            for (int i = 0, n = s.length(); i < n; i++) {
                char c = s.charAt(i);
                if (c > 0xFF) {
                    throw new IllegalArgumentException(
                            String.format("latin1 codec: char U+%04X at index %d is not Latin-1", (int) c, i));
                }
            }
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "latin1 codec: value is null");
            checkLatin1(value);
            int n = value.length();
            Objects.checkFromIndexSize(offset, n, target.byteSize());
            for (int i = 0; i < n; i++) {
                target.set(BYTE, offset + i, (byte) value.charAt(i));
            }
        }

        @Override
        public long maxEncodedSize(String value) {
            return value.length();
        }

        /** One pass: checks and copies each char; a non-Latin-1 char throws midway. */
        @Override
        public int encodeKey(String value, byte[] target) {
            int n = value.length();
            for (int i = asciiPrefix(value, n, target, 0x100); i < n; i++) {
                char c = value.charAt(i);
                if (c > 0xFF) {
                    checkLatin1(value); // throws, naming the char
                }
                target[i] = (byte) c;
            }
            return n;
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            return new String(copyOut(source, offset, length), StandardCharsets.ISO_8859_1);
        }

        @Override
        public boolean infallibleWrite() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.latin1()";
        }
    }

    private static final class LongCodec implements Codec<Long>, TrustedCodec<Long> {
        static final LongCodec INSTANCE = new LongCodec();

        @Override
        public int size(Long value) {
            Objects.requireNonNull(value, "longs codec: value is null");
            return Long.BYTES;
        }

        @Override
        public void write(Long value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "longs codec: value is null");
            target.set(LONG_BE, offset, value ^ Long.MIN_VALUE);
        }

        @Override
        public Long read(MemorySegment source, long offset, int length) {
            if (length != Long.BYTES) {
                throw wrongLength("longs", Long.BYTES, length);
            }
            return source.get(LONG_BE, offset) ^ Long.MIN_VALUE;
        }

        @Override
        public long maxEncodedSize(Long value) {
            return size(value);
        }

        @Override
        public int encodeKey(Long value, byte[] target) {
            Objects.requireNonNull(value, "longs codec: value is null");
            BIG_ENDIAN_LONG.set(target, 0, value ^ Long.MIN_VALUE);
            return Long.BYTES;
        }

        @Override
        public boolean infallibleWrite() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.longs()";
        }
    }

    private static final class IntCodec implements Codec<Integer>, TrustedCodec<Integer> {
        static final IntCodec INSTANCE = new IntCodec();

        @Override
        public int size(Integer value) {
            Objects.requireNonNull(value, "ints codec: value is null");
            return Integer.BYTES;
        }

        @Override
        public void write(Integer value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "ints codec: value is null");
            target.set(INT_BE, offset, value ^ Integer.MIN_VALUE);
        }

        @Override
        public Integer read(MemorySegment source, long offset, int length) {
            if (length != Integer.BYTES) {
                throw wrongLength("ints", Integer.BYTES, length);
            }
            return source.get(INT_BE, offset) ^ Integer.MIN_VALUE;
        }

        @Override
        public long maxEncodedSize(Integer value) {
            return size(value);
        }

        @Override
        public int encodeKey(Integer value, byte[] target) {
            Objects.requireNonNull(value, "ints codec: value is null");
            BIG_ENDIAN_INT.set(target, 0, value ^ Integer.MIN_VALUE);
            return Integer.BYTES;
        }

        @Override
        public boolean infallibleWrite() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.ints()";
        }
    }

    private static final class BytesCodec implements Codec<byte[]>, TrustedCodec<byte[]> {
        static final BytesCodec INSTANCE = new BytesCodec();

        @Override
        public int size(byte[] value) {
            Objects.requireNonNull(value, "bytes codec: value is null");
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "bytes codec: value is null");
            MemorySegment.copy(value, 0, target, BYTE, offset, value.length);
        }

        @Override
        public byte[] read(MemorySegment source, long offset, int length) {
            return copyOut(source, offset, length);
        }

        @Override
        public long maxEncodedSize(byte[] value) {
            return size(value);
        }

        @Override
        public int encodeKey(byte[] value, byte[] target) {
            Objects.requireNonNull(value, "bytes codec: value is null");
            System.arraycopy(value, 0, target, 0, value.length);
            return value.length;
        }

        @Override
        public boolean infallibleWrite() {
            return true;
        }

        @Override
        public String toString() {
            return "Codecs.bytes()";
        }
    }

    private static final class ByteBufferCodec implements Codec<ByteBuffer>, TrustedCodec<ByteBuffer> {
        static final ByteBufferCodec INSTANCE = new ByteBufferCodec();

        @Override
        public int size(ByteBuffer value) {
            Objects.requireNonNull(value, "byteBuffers codec: value is null");
            return value.remaining();
        }

        @Override
        public void write(ByteBuffer value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "byteBuffers codec: value is null");
            // A view of [position, limit); the buffer's own position is left alone.
            MemorySegment source = MemorySegment.ofBuffer(value);
            MemorySegment.copy(source, 0, target, offset, source.byteSize());
        }

        @Override
        public ByteBuffer read(MemorySegment source, long offset, int length) {
            return ByteBuffer.wrap(copyOut(source, offset, length));
        }

        @Override
        public long maxEncodedSize(ByteBuffer value) {
            return size(value);
        }

        @Override
        public int encodeKey(ByteBuffer value, byte[] target) {
            Objects.requireNonNull(value, "byteBuffers codec: value is null");
            int n = value.remaining();
            value.get(value.position(), target, 0, n); // absolute: the buffer's position stays
            return n;
        }

        @Override
        public String toString() {
            return "Codecs.byteBuffers()";
        }
    }

    private static final class SegmentCodec implements Codec<MemorySegment>, TrustedCodec<MemorySegment> {
        static final SegmentCodec INSTANCE = new SegmentCodec();

        @Override
        public int size(MemorySegment value) {
            Objects.requireNonNull(value, "segments codec: value is null");
            return checkedSize(value);
        }

        private static int checkedSize(MemorySegment value) {
            long size = value.byteSize();
            if (size > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "segments codec: segment of " + size + " bytes exceeds Integer.MAX_VALUE");
            }
            return (int) size;
        }

        @Override
        public void write(MemorySegment value, MemorySegment target, long offset) {
            Objects.requireNonNull(value, "segments codec: value is null");
            MemorySegment.copy(value, 0, target, offset, checkedSize(value));
        }

        @Override
        public MemorySegment read(MemorySegment source, long offset, int length) {
            return MemorySegment.ofArray(copyOut(source, offset, length));
        }

        @Override
        public long maxEncodedSize(MemorySegment value) {
            return size(value);
        }

        @Override
        public int encodeKey(MemorySegment value, byte[] target) {
            Objects.requireNonNull(value, "segments codec: value is null");
            int n = checkedSize(value);
            MemorySegment.copy(value, BYTE, 0, target, 0, n);
            return n;
        }

        @Override
        public String toString() {
            return "Codecs.segments()";
        }
    }
}
