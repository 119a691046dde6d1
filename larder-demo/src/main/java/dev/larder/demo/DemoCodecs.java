package dev.larder.demo;

import dev.larder.Codec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * The two codecs the demo needs: UTF-8 strings and byte arrays. Stand-ins until the library's
 * own {@code Codecs} lands; switch to {@code Codecs.utf8()} and {@code Codecs.bytes()} then.
 */
final class DemoCodecs {
    private DemoCodecs() {}

    static Codec<String> utf8() {
        return Utf8.INSTANCE;
    }

    static Codec<byte[]> bytes() {
        return Bytes.INSTANCE;
    }

    private enum Utf8 implements Codec<String> {
        INSTANCE;

        @Override
        public int size(String value) {
            int n = value.length();
            for (int i = 0; i < n; i++) {
                if (value.charAt(i) >= 0x80) {
                    // Not plain ASCII: let the JDK count (it handles surrogates and bad pairs).
                    return value.getBytes(StandardCharsets.UTF_8).length;
                }
            }
            return n;
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            int n = value.length();
            boolean ascii = true;
            for (int i = 0; i < n && ascii; i++) {
                ascii = value.charAt(i) < 0x80;
            }
            if (ascii) {
                MemorySegment slice = target.asSlice(offset, n);
                for (int i = 0; i < n; i++) {
                    slice.set(ValueLayout.JAVA_BYTE, i, (byte) value.charAt(i));
                }
            } else {
                byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
                MemorySegment.copy(bytes, 0, target, ValueLayout.JAVA_BYTE, offset, bytes.length);
            }
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            byte[] bytes = new byte[length];
            MemorySegment.copy(source, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    private enum Bytes implements Codec<byte[]> {
        INSTANCE;

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
    }
}
