package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ThreadCensusTest {
    private static final long START = -5_000_000_000L; // System.nanoTime may be negative
    private static final long EVERY = ThreadCensus.COUNT_EVERY_NANOS;

    @Test
    void oneWriterOnTwoCoresLeavesACoreSpare() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(0);
        census.saw(0);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void asManyWritersAsCoresLeaveNone() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(3);
        census.saw(7);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void eachCountStartsAfresh() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(0);
        census.saw(1);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
        census.saw(1); // the other writer stopped
        census.count(START + 2 * EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void aCountTooSoonAfterTheLastChangesNothing() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(0);
        census.saw(1);
        census.count(START + EVERY - 1);
        assertThat(census.spareCore()).isTrue();
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void oneCoreIsNeverSpare() {
        ThreadCensus census = new ThreadCensus(1, START);
        assertThat(census.spareCore()).isFalse();
        census.count(START + EVERY);
        assertThat(census.spareCore()).isFalse();
    }

    @Test
    void threadIndicesSixtyFourApartShareABit() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(5);
        census.saw(69); // a known undercount, past 64 writing threads
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void aRefusedTaskStopsHandOffsUntilTheNextCount() {
        ThreadCensus census = new ThreadCensus(4, START);
        census.executorRefused();
        assertThat(census.spareCore()).isFalse();
        census.saw(0);
        census.count(START + EVERY);
        assertThat(census.spareCore()).isTrue();
    }

    @Test
    void writersOnSeveralThreadsAreAllCounted() throws InterruptedException {
        ThreadCensus census = new ThreadCensus(4, START);
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            int index = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 100_000; i++) {
                    census.saw(index);
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

    @Test
    void aReaderIsSeenOncePerSoManyHitsOfItsStripe() {
        ThreadCensus census = new ThreadCensus(2, START);
        census.saw(0); // the writer
        census.read(1, ThreadCensus.READS_PER_SIGHTING - 1);
        census.count(START + EVERY);
        assertThat(census.spareCore()).as("a reader not yet seen").isTrue();
        census.saw(0);
        census.read(1, ThreadCensus.READS_PER_SIGHTING);
        census.count(START + 2 * EVERY);
        assertThat(census.spareCore()).as("a writer and a reader on two cores").isFalse();
    }
}
