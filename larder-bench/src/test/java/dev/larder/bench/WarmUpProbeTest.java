package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code WarmUpProbe} prints a row per cache with a time per insert for every slice. */
class WarmUpProbeTest {
    @Test
    void eachCacheGetsARowOfOneTimePerSlice() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        WarmUpProbe.run("larder", 2_000, 2, 3, 20, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<String> rows = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(rows).hasSize(2);
        for (int c = 0; c < rows.size(); c++) {
            String[] parts = rows.get(c).split(":");
            assertThat(parts[0]).isEqualTo("larder cache " + c + " ns/insert");
            List<Long> times =
                    Arrays.stream(parts[1].trim().split(" ")).map(Long::valueOf).toList();
            assertThat(times).hasSize(3).allSatisfy(t -> assertThat(t).isPositive());
        }
    }
}
