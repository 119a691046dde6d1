package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's quick start, compiled and run; and a check that the README shows this code. */
class QuickStartTest {

    @Test
    void quickStartRuns() {
        // README:begin
        try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(64L << 20) // 64 MiB of native memory: records, index, everything
                .expireAfterWrite(Duration.ofMinutes(10))
                .build()) {

            cache.put("user:42", "{\"name\":\"Ada\"}".getBytes());
            byte[] json = cache.getIfPresent("user:42"); // a copy on the heap

            // Zero-copy: read the value where it lies, inside the callback.
            int firstByte = cache.read("user:42", value -> value.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));

            // Read-through: one load per key at a time, however many threads ask.
            byte[] loaded = cache.get("user:7", key -> ("{\"id\":\"" + key + "\"}").getBytes());

            System.out.println(new String(json) + " " + (char) firstByte + " " + new String(loaded));
            System.out.println(cache.stats());
            // README:end
            assertThat(json).isEqualTo("{\"name\":\"Ada\"}".getBytes());
            assertThat(firstByte).isEqualTo('{');
            assertThat(cache.getIfPresent("user:7")).isEqualTo(loaded);
            assertThat(cache.stats().hitCount()).isEqualTo(3);
        }
    }

    @Test
    void readmeShowsTheQuickStart() throws IOException {
        Path readme = Path.of("..", "README.md");
        String text = Files.readString(readme);
        List<String> source = Files.readAllLines(Path.of("src/test/java/dev/larder/QuickStartTest.java"));
        int begin = source.indexOf("        // README:begin");
        int end = source.indexOf("            // README:end");
        assertThat(begin).isPositive();
        for (String line : source.subList(begin + 1, end)) {
            assertThat(text).as("README quick start line").contains(line.strip());
        }
    }
}
