package dev.larder.simulator.trace;

import java.io.IOException;
import java.io.InputStream;

/**
 * Splits ASCII text into lines of whitespace-separated signed decimal 64-bit integers, parsing
 * straight from the bytes: no {@code String} per line, no boxing. Accepts {@code \n} and {@code
 * \r\n} line ends; fails on anything that is not an integer or does not fit in a {@code long}.
 */
final class LineTokenizer {
    private final InputStream in;
    private final String source;
    private final byte[] buffer = new byte[1 << 16];
    private int position;
    private int limit;
    private long line;

    LineTokenizer(InputStream in, String source) {
        this.in = in;
        this.source = source;
    }

    /**
     * Parses the next non-blank line into {@code fields}. Returns the number of integers on it
     * (fields past the array's length are parsed and counted but not stored), or -1 at the end.
     */
    int next(long[] fields) throws IOException {
        while (true) {
            int c = read();
            if (c < 0) {
                return -1;
            }
            line++;
            int count = 0;
            while (c >= 0 && c != '\n') {
                if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
                    c = read();
                    continue;
                }
                long value = 0;
                boolean negative = false;
                if (c == '-' || c == '+') {
                    negative = c == '-';
                    c = read();
                }
                int digits = 0;
                // Accumulate negatively so that Long.MIN_VALUE parses.
                while (c >= '0' && c <= '9') {
                    int d = c - '0';
                    if (value < (Long.MIN_VALUE + d) / 10) {
                        throw error("integer out of the 64-bit range");
                    }
                    value = value * 10 - d;
                    digits++;
                    c = read();
                }
                if (digits == 0 || !(c < 0 || c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == ',')) {
                    throw error("not an integer" + (c >= 32 && c < 127 ? " (at '" + (char) c + "')" : ""));
                }
                if (!negative) {
                    if (value == Long.MIN_VALUE) {
                        throw error("integer out of the 64-bit range");
                    }
                    value = -value;
                }
                if (count < fields.length) {
                    fields[count] = value;
                }
                count++;
            }
            if (count > 0) {
                return count;
            }
            if (c < 0) {
                return -1;
            }
        }
    }

    IOException error(String message) {
        return new IOException(source + ":" + line + ": " + message);
    }

    private int read() throws IOException {
        if (position == limit) {
            limit = in.read(buffer, 0, buffer.length);
            position = 0;
            if (limit <= 0) {
                limit = 0;
                return -1;
            }
        }
        return buffer[position++];
    }
}
