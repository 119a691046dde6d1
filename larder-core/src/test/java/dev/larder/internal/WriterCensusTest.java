package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WriterCensusTest {
    private static final long START = -5_000_000_000L; // System.nanoTime may be negative
    private static final long EVERY = WriterCensus.JUDGE_EVERY_NANOS;

    @Test
    void oneWriterOnTwoCoresLeavesACoreSpare() {
        WriterCensus census = new WriterCensus(2, START);
        census.wrote(0);
        census.wrote(0);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void asManyWritersAsCoresLeaveNone() {
        WriterCensus census = new WriterCensus(2, START);
        census.wrote(3);
        census.wrote(7);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void eachCountStartsAfresh() {
        WriterCensus census = new WriterCensus(2, START);
        census.wrote(0);
        census.wrote(1);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
        census.wrote(1); // the other writer stopped
        census.count(START + 2 * EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void aCountTooSoonAfterTheLastChangesNothing() {
        WriterCensus census = new WriterCensus(2, START);
        census.wrote(0);
        census.wrote(1);
        census.count(START + EVERY - 1);
        assertThat(census.spareCore()).isTrue();
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void oneCoreIsNeverSpare() {
        WriterCensus census = new WriterCensus(1, START);
        assertThat(census.spareCore()).isFalse();
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void threadIndicesSixtyFourApartShareABit() {
        WriterCensus census = new WriterCensus(2, START);
        census.wrote(5);
        census.wrote(69); // a known undercount, past 64 writing threads
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void aRefusedTaskStopsHandOffsUntilTheNextCount() {
        WriterCensus census = new WriterCensus(4, START);
        census.executorRefused();
        assertThat(census.spareCore()).isFalse();
        census.wrote(0);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void writersOnSeveralThreadsAreAllCounted() throws InterruptedException {
        WriterCensus census = new WriterCensus(4, START);
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            int index = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 100_000; i++) {
                    census.wrote(index);
                }
            });
            threads[t].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }
}
