package dev.larder.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
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

    @Test
    void setBitsKeepsTheBitsAlreadySet() {
        OwnLineLongs longs = new OwnLineLongs(2);
        longs.set(1, 0b100);
        longs.setBits(1, 0b001);
        longs.setBits(1, 0b010);
        assertThat(longs.get(1)).isEqualTo(0b111);
        assertThat(longs.get(0)).isZero();
        assertThatThrownBy(() -> longs.setBits(2, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void bitsSetByManyThreadsAtOnceAreAllKept() throws Exception {
        OwnLineLongs longs = new OwnLineLongs(1);
        for (int round = 0; round < 50; round++) {
            longs.set(0, 0);
            CyclicBarrier start = new CyclicBarrier(8);
            Thread[] threads = new Thread[8];
            for (int t = 0; t < threads.length; t++) {
                int index = t;
                threads[t] = new Thread(() -> {
                    try {
                        start.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    for (int bit = 0; bit < 8; bit++) { // each bit once: a lost update stays lost
                        longs.setBits(0, 1L << (index * 8 + bit));
                    }
                });
                threads[t].start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(longs.get(0)).as("round %d", round).isEqualTo(-1L);
        }
    }
}
