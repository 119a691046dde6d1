package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeysTest {
    @Test
    void keysAreSixteenAsciiBytesAndUnique() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            String k = Keys.key(i);
            assertThat(k.getBytes(StandardCharsets.UTF_8)).hasSize(Keys.KEY_BYTES);
            assertThat(k).startsWith("key:");
            assertThat(seen.add(k)).isTrue();
        }
        assertThat(Keys.key(12345)).isEqualTo(Keys.key(12345));
    }

    @Test
    void keyLengthIsSixteenUnlessAskedAndCheckedWhenAsked() {
        assertThat(Keys.keyBytes(null)).isEqualTo(16);
        assertThat(Keys.keyBytes(" 64 ")).isEqualTo(64);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Keys.keyBytes("8"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("larder.bench.keyBytes");
    }

    @Test
    void scrambleIsABijectionOnASample() {
        Set<Long> seen = new HashSet<>();
        long mask = (1L << 48) - 1;
        for (long i = mask - 50_000; i <= mask; i++) {
            long x = Keys.scramble(i);
            assertThat(x).isBetween(0L, mask);
            assertThat(seen.add(x)).isTrue();
        }
    }

    @Test
    void valuesAreDeterministic() {
        assertThat(Keys.value(5, 256)).hasSize(256).isEqualTo(Keys.value(5, 256));
        assertThat(Keys.value(5, 256)).isNotEqualTo(Keys.value(6, 256));
    }
}
