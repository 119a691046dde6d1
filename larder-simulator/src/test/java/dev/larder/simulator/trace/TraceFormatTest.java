package dev.larder.simulator.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceFormatTest {
    @TempDir
    Path dir;

    private Path gz(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            out.write(text.getBytes(StandardCharsets.US_ASCII));
        }
        return file;
    }

    private static long[] read(TraceFormat format, Path file, long limit) throws IOException {
        LongArrayBuilder keys = new LongArrayBuilder();
        long n = format.read(file, keys, limit);
        assertThat(n).isEqualTo(keys.size());
        return keys.toArray();
    }

    @Test
    void keysFormatReadsSignedKeysOnePerLine() throws IOException {
        Path file = gz("tiny.keys.gz", "5\n-7\n\n9223372036854775807\r\n-9223372036854775808\n+3\n  42  \n0");
        assertThat(TraceFormat.of(file)).isEqualTo(TraceFormat.KEYS);
        assertThat(TraceFormat.KEYS.traceName(file)).isEqualTo("tiny");
        assertThat(read(TraceFormat.KEYS, file, Long.MAX_VALUE))
                .containsExactly(5, -7, Long.MAX_VALUE, Long.MIN_VALUE, 3, 42, 0);
        assertThat(read(TraceFormat.KEYS, file, 3)).containsExactly(5, -7, Long.MAX_VALUE);
    }

    @Test
    void arcFormatExpandsRuns() throws IOException {
        Path file = gz("tiny.arc.gz", "100 3 0 0\n7 1 0 1\n50 0 0 2\n-2 4 9 3\n");
        assertThat(TraceFormat.of(file)).isEqualTo(TraceFormat.ARC);
        assertThat(TraceFormat.ARC.traceName(file)).isEqualTo("tiny");
        assertThat(read(TraceFormat.ARC, file, Long.MAX_VALUE)).containsExactly(100, 101, 102, 7, -2, -1, 0, 1);
        // The limit cuts a run in the middle.
        assertThat(read(TraceFormat.ARC, file, 2)).containsExactly(100, 101);
        assertThat(read(TraceFormat.ARC, file, 5)).containsExactly(100, 101, 102, 7, -2);
    }

    @Test
    void malformedLinesFailWithTheirLineNumber() throws IOException {
        Path keys = gz("bad.keys.gz", "1\n2\nthree\n");
        assertThatThrownBy(() -> read(TraceFormat.KEYS, keys, Long.MAX_VALUE))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("bad.keys.gz:3");
        Path twoFields = gz("two.keys.gz", "1 2\n");
        assertThatThrownBy(() -> read(TraceFormat.KEYS, twoFields, Long.MAX_VALUE))
                .hasMessageContaining(":1")
                .hasMessageContaining("one key per line");
        Path overflow = gz("big.keys.gz", "9223372036854775808\n");
        assertThatThrownBy(() -> read(TraceFormat.KEYS, overflow, Long.MAX_VALUE))
                .hasMessageContaining("64-bit range");
        Path shortArc = gz("short.arc.gz", "1 2 0 0\n5\n");
        assertThatThrownBy(() -> read(TraceFormat.ARC, shortArc, Long.MAX_VALUE))
                .hasMessageContaining("short.arc.gz:2");
        Path negative = gz("neg.arc.gz", "1 -2 0 0\n");
        assertThatThrownBy(() -> read(TraceFormat.ARC, negative, Long.MAX_VALUE))
                .hasMessageContaining("negative count");
    }

    @Test
    void catalogFindsBothFormatsWithTheirSizes() throws IOException {
        gz("loop.keys.gz", "1\n2\n");
        gz("p2.arc.gz", "1 2 0 0\n");
        gz("mystery.keys.gz", "1\n");
        Files.writeString(dir.resolve("README.md"), "not a trace");
        TraceCatalog catalog = TraceCatalog.scan(dir);
        assertThat(catalog.traces()).extracting(TraceCatalog.TraceFile::name).containsExactly("loop", "p2", "mystery");
        assertThat(catalog.find("loop").sizes()).containsExactly(500, 1000);
        assertThat(catalog.find("p2").format()).isEqualTo(TraceFormat.ARC);
        assertThat(catalog.find("p2").load(Long.MAX_VALUE)).containsExactly(1, 2);
        assertThat(catalog.find("mystery").sizes()).isEqualTo(TraceCatalog.DEFAULT_SIZES);
        assertThat(TraceCatalog.scan(dir.resolve("absent")).traces()).isEmpty();
    }
}
