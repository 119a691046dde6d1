package dev.larder.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OwnLineLongsTest {
    @Test
    void eachLongKeepsItsOwnValue() {
        OwnLineLongs longs = new OwnLineLongs(3);
        assertThat(longs.get(0)).isZero();
        assertThat(longs.add(1, 5)).isEqualTo(5);
        assertThat(longs.add(1, -2)).isEqualTo(3);
        longs.set(2, Long.MIN_VALUE);
        longs.set(0, 42);
        assertThat(longs.get(0)).isEqualTo(42);
        assertThat(longs.get(1)).isEqualTo(3);
        assertThat(longs.get(2)).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void aBadIndexOrLengthIsNamed() {
        OwnLineLongs longs = new OwnLineLongs(2);
        // An index past the length must not land in the padding, where it would read as a value.
        assertThatThrownBy(() -> longs.get(2))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("2");
        assertThatThrownBy(() -> longs.add(-1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> longs.setRelease(5, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new OwnLineLongs(0)).hasMessageContaining("length must be positive: 0");
    }

    @Test
    void theValuesSitBetween128UnusedBytesOnEachSide() throws ReflectiveOperationException {
        OwnLineLongs longs = new OwnLineLongs(2);
        longs.set(0, 7);
        longs.set(1, 8);
        Field field = OwnLineLongs.class.getDeclaredField("values");
        field.setAccessible(true);
        long[] values = (long[]) field.get(longs);
        assertThat(values).hasSize(16 + 2 + 16);
        assertThat(values[16]).isEqualTo(7);
        assertThat(values[17]).isEqualTo(8);
    }

    @Test
    void aReleasedValueIsSeenByAnotherThread() throws Exception {
        OwnLineLongs longs = new OwnLineLongs(1);
        CompletableFuture<Long> seen = CompletableFuture.supplyAsync(() -> {
            long v;
            while ((v = longs.getAcquire(0)) == 0) {
                Thread.onSpinWait();
            }
            return v;
        });
        longs.setRelease(0, 99);
        assertThat(seen.get(10, TimeUnit.SECONDS)).isEqualTo(99);
    }
}
