package dev.larder;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** Minimal codecs for the tests, independent of the library's own {@code Codecs}. */
final class TestCodecs {
    private TestCodecs() {}

    private static final Codec<String> UTF8 = new Codec<>() {
        @Override
        public int size(String value) {
            Objects.requireNonNull(value, "value");
            return value.getBytes(StandardCharsets.UTF_8).length;
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
            MemorySegment.copy(bytes, 0, target, ValueLayout.JAVA_BYTE, offset, bytes.length);
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            byte[] bytes = new byte[length];
            MemorySegment.copy(source, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            return new String(bytes, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "TestCodecs.utf8";
        }
    };

    private static final Codec<byte[]> BYTES = new Codec<>() {
        @Override
        public int size(byte[] value) {
            return value.length;
        }

        @Override
        public void write(byte[] value, MemorySegment target, long offset) {
            MemorySegment.copy(value, 0, target, ValueLayout.JAVA_BYTE, offset, value.length);
        }

        @Override
        public byte[] read(MemorySegment source, long offset, int length) {
            byte[] bytes = new byte[length];
            MemorySegment.copy(source, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            return bytes;
        }

        @Override
        public String toString() {
            return "TestCodecs.bytes";
        }
    };

    private static final Codec<Long> LONGS = new Codec<>() {
        @Override
        public int size(Long value) {
            Objects.requireNonNull(value, "value");
            return Long.BYTES;
        }

        @Override
        public void write(Long value, MemorySegment target, long offset) {
            target.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, value);
        }

        @Override
        public Long read(MemorySegment source, long offset, int length) {
            if (length != Long.BYTES) {
                throw new IllegalArgumentException("a long needs 8 bytes, got " + length);
            }
            return source.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
        }

        @Override
        public String toString() {
            return "TestCodecs.longs";
        }
    };

    static Codec<String> utf8() {
        return UTF8;
    }

    static Codec<byte[]> bytes() {
        return BYTES;
    }

    static Codec<Long> longs() {
        return LONGS;
    }

    /** Decodes a whole segment (as a {@link ValueReader} sees it) as UTF-8. */
    static String utf8(MemorySegment segment) {
        return UTF8.read(segment, 0, Math.toIntExact(segment.byteSize()));
    }
}
