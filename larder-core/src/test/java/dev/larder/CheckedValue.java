package dev.larder;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * Self-checking values for concurrency tests: {@code [key length:int][key:utf8][sequence:long]
 * [payload length:int][payload][crc32 of everything before:int]}. A torn value, a value of
 * another key or a truncated one fails {@link #check}.
 */
final class CheckedValue {
    private CheckedValue() {}

    static byte[] create(String key, long sequence, int payloadLength) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b =
                ByteBuffer.allocate(4 + k.length + 8 + 4 + payloadLength + 4).order(ByteOrder.BIG_ENDIAN);
        b.putInt(k.length).put(k).putLong(sequence).putInt(payloadLength);
        for (int i = 0; i < payloadLength; i++) {
            b.put((byte) (sequence * 31 + i * 7));
        }
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** Checks {@code value} whole and that it belongs to {@code key}; returns its sequence. */
    static long check(String key, byte[] value) {
        if (value == null) {
            throw new AssertionError("null value for key " + key);
        }
        return check(key, MemorySegment.ofArray(value));
    }

    /** Checks a value in place (e.g. the view a {@link ValueReader} gets); returns its sequence. */
    static long check(String key, MemorySegment value) {
        long size = value.byteSize();
        if (size < 4 + 8 + 4 + 4) {
            throw new AssertionError("value of key " + key + " too short: " + size + " bytes");
        }
        ByteBuffer b = value.asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        int keyLength = b.getInt(0);
        if (keyLength < 0 || keyLength > size - 20) {
            throw new AssertionError(
                    "value of key " + key + " is corrupt: key length " + keyLength + " in " + size + " bytes");
        }
        int payloadLength = b.getInt(4 + keyLength + 8);
        if ((long) 4 + keyLength + 8 + 4 + payloadLength + 4 != size) {
            throw new AssertionError("value of key " + key + " is corrupt: payload length " + payloadLength
                    + " does not match its size " + size);
        }
        CRC32 crc = new CRC32();
        crc.update(b.slice(0, (int) size - 4));
        int stored = b.getInt((int) size - 4);
        if (stored != (int) crc.getValue()) {
            throw new AssertionError("value of key " + key + " is torn: CRC mismatch (" + size + " bytes)");
        }
        byte[] k = new byte[keyLength];
        MemorySegment.copy(value, ValueLayout.JAVA_BYTE, 4, k, 0, keyLength);
        byte[] expected = key.getBytes(StandardCharsets.UTF_8);
        if (!Arrays.equals(k, expected)) {
            throw new AssertionError(
                    "value read for key " + key + " belongs to key " + new String(k, StandardCharsets.UTF_8));
        }
        return b.getLong(4 + keyLength);
    }

    static long sequence(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.BIG_ENDIAN);
        return b.getLong(4 + b.getInt(0));
    }
}
