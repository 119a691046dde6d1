package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The experiment knob {@code larder.sketchScale}: how it sizes the sketch, and what it accepts. */
class WindowTinyLfuScaleTest {

    @Test
    void scaleOneIsBytesFor() {
        for (long capacity : new long[] {0, 16, 1000, 1040, 1 << 20, 1L << 28, 1_000_000_000L}) {
            assertThat(WindowTinyLfu.sketchBytesFor(capacity, 1.0)).isEqualTo(FrequencySketch.bytesFor(capacity));
        }
    }

    @Test
    void aScaleShrinksTheTableInWholeBlocksDownToOne() {
        // 0.36: a billion entries' share of the 1 GiB ceiling, at 10,000 entries.
        assertThat(WindowTinyLfu.sketchBytesFor(10_000, 0.36)).isEqualTo(10_752L); // 30,000 * 0.36 = 10,800
        assertThat(WindowTinyLfu.sketchBytesFor(1_000, 0.36)).isEqualTo(1_472L); // the 4 KiB floor, scaled
        assertThat(WindowTinyLfu.sketchBytesFor(1_000, 0.001)).isEqualTo(64L);
        assertThat(WindowTinyLfu.sketchBytesFor(1L << 28, 0.5)).isEqualTo(3L << 27);
        // Never above the ceiling.
        assertThat(WindowTinyLfu.sketchBytesFor(1L << 28, 4.0)).isEqualTo(FrequencySketch.MAX_BYTES);
        assertThat(WindowTinyLfu.sketchBytesFor(1_000, 2.0)).isEqualTo(8_192L);
        for (long capacity = 0; capacity < 100_000; capacity += 977) {
            long bytes = WindowTinyLfu.sketchBytesFor(capacity, 0.27);
            assertThat(bytes % 64).isZero();
            assertThat(bytes).isBetween(64L, FrequencySketch.bytesFor(capacity));
        }
    }

    @Test
    void onlyAPositiveFiniteScaleIsTaken() {
        assertThat(WindowTinyLfu.parseScale(null)).isEqualTo(1.0);
        assertThat(WindowTinyLfu.parseScale("0.27")).isEqualTo(0.27);
        assertThat(WindowTinyLfu.parseScale(" 2 ")).isEqualTo(2.0);
        for (String bad : new String[] {"", "abc", "0", "-1", "NaN", "Infinity"}) {
            assertThat(WindowTinyLfu.parseScale(bad)).as(bad).isEqualTo(1.0);
        }
    }

    @Test
    void theDefaultIsOne() {
        if (System.getProperty("larder.sketchScale") == null) {
            assertThat(WindowTinyLfu.SKETCH_SCALE).isEqualTo(1.0);
        }
    }
}
