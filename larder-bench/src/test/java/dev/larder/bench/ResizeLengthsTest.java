package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code putResize} must measure overwrites that change a value's length: its lengths span 3/4 to
 * 5/4 of the value size, all different, so that seven turns in eight change the length.
 */
class ResizeLengthsTest {

    @Test
    void lengthsSpanAQuarterEitherSideOfTheValueSize() {
        int[] lengths = IntStream.range(0, GetPutBenchmark.RESIZE_SIZES)
                .map(i -> GetPutBenchmark.resizedLength(256, i))
                .toArray();
        assertThat(lengths)
                .startsWith(192)
                .endsWith(320)
                .doesNotHaveDuplicates()
                .isSorted();
    }

    @Test
    void tinyValuesStillGetALength() {
        for (int i = 0; i < GetPutBenchmark.RESIZE_SIZES; i++) {
            assertThat(GetPutBenchmark.resizedLength(1, i)).isPositive();
        }
    }
}
