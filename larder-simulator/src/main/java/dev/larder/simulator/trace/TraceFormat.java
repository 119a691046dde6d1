package dev.larder.simulator.trace;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongConsumer;
import java.util.zip.GZIPInputStream;

/**
 * The two trace formats of {@code ../shared/traces}, read as a stream of keys: nothing but the
 * current line is held, and keys reach the consumer as primitive {@code long}s.
 *
 * <ul>
 *   <li>{@link #KEYS} ({@code *.keys.gz}): one signed decimal 64-bit key per line.
 *   <li>{@link #ARC} ({@code *.arc.gz}): the ARC authors' format, {@code start count ignored
 *       requestNumber} per line, standing for {@code count} requests of the keys {@code start,
 *       start+1, ..., start+count-1}. Only the first two fields are used.
 * </ul>
 *
 * Blank lines are skipped; any other malformed line fails with its line number.
 */
public enum TraceFormat {
    KEYS(".keys.gz") {
        @Override
        long parse(LineTokenizer lines, LongConsumer sink, long limit) throws IOException {
            long[] fields = new long[2];
            long emitted = 0;
            while (emitted < limit) {
                int n = lines.next(fields);
                if (n < 0) {
                    break;
                }
                if (n != 1) {
                    throw lines.error("expected one key per line, found " + n + " fields");
                }
                sink.accept(fields[0]);
                emitted++;
            }
            return emitted;
        }
    },
    ARC(".arc.gz") {
        @Override
        long parse(LineTokenizer lines, LongConsumer sink, long limit) throws IOException {
            long[] fields = new long[4];
            long emitted = 0;
            while (emitted < limit) {
                int n = lines.next(fields);
                if (n < 0) {
                    break;
                }
                if (n < 2) {
                    throw lines.error("expected 'start count ignored requestNumber', found " + n + " fields");
                }
                long start = fields[0];
                long count = fields[1];
                if (count < 0) {
                    throw lines.error("negative count " + count);
                }
                for (long i = 0; i < count && emitted < limit; i++, emitted++) {
                    sink.accept(start + i);
                }
            }
            return emitted;
        }
    };

    private final String suffix;

    TraceFormat(String suffix) {
        this.suffix = suffix;
    }

    /** The file name suffix, e.g. {@code .keys.gz}. */
    public String suffix() {
        return suffix;
    }

    /** The format a file name ends with, or null. */
    public static TraceFormat of(Path file) {
        String name = file.getFileName().toString();
        for (TraceFormat format : values()) {
            if (name.endsWith(format.suffix)) {
                return format;
            }
        }
        return null;
    }

    /** The trace's name: its file name without the format suffix. */
    public String traceName(Path file) {
        String name = file.getFileName().toString();
        return name.substring(0, name.length() - suffix.length());
    }

    /**
     * Streams the keys of a gzip-compressed trace file to {@code sink}, at most {@code limit} of
     * them. Returns how many were delivered.
     */
    public long read(Path file, LongConsumer sink, long limit) throws IOException {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file), 1 << 16)) {
            return read(in, file.toString(), sink, limit);
        }
    }

    /** Streams the keys of an uncompressed trace to {@code sink}; {@code source} names it in errors. */
    public long read(InputStream in, String source, LongConsumer sink, long limit) throws IOException {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must not be negative, was " + limit);
        }
        return parse(new LineTokenizer(new BufferedInputStream(in, 1 << 16), source), sink, limit);
    }

    abstract long parse(LineTokenizer lines, LongConsumer sink, long limit) throws IOException;
}
