package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.internal.memory.NativeMemory;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The ghost lists: which evicted keys come back within the horizon, on which side. */
class GhostListsTest {

    /** Runs {@code test} on fresh ghost lists of this horizon, and frees them. */
    private static void withGhosts(long horizon, Consumer<GhostLists> test) {
        GhostLists ghosts = new GhostLists(horizon);
        try {
            test.accept(ghosts);
        } finally {
            ghosts.free();
        }
    }

    @Test
    void aWindowLoserInsertedAgainWithinTheHorizonIsAWindowGhostHit() {
        withGhosts(10, ghosts -> {
            ghosts.windowDeparture(42, true);
            for (int i = 0; i < 10; i++) {
                ghosts.windowDeparture(1_000 + i, false); // ten more leave the window for main
            }
            ghosts.inserted(42);
            assertThat(ghosts.windowHits()).isEqualTo(1);
            assertThat(ghosts.mainHits()).isZero();
            ghosts.inserted(42); // a ghost counts once: it is in the cache again
            assertThat(ghosts.windowHits()).isEqualTo(1);
        });
    }

    @Test
    void aMainVictimInsertedAgainWithinTheHorizonIsAMainGhostHit() {
        withGhosts(10, ghosts -> {
            ghosts.mainEviction(7);
            for (int i = 0; i < 5; i++) {
                ghosts.mainEviction(2_000 + i);
                ghosts.windowDeparture(3_000 + i, true); // the window's departures do not age it
            }
            ghosts.inserted(7);
            assertThat(ghosts.mainHits()).isEqualTo(1);
            assertThat(ghosts.windowHits()).isZero();
        });
    }

    @Test
    void aGhostPastTheHorizonIsNoHit() {
        withGhosts(10, ghosts -> {
            ghosts.windowDeparture(42, true);
            ghosts.mainEviction(43);
            for (int i = 0; i < 11; i++) {
                ghosts.windowDeparture(1_000 + i, false);
                ghosts.mainEviction(2_000 + i * 7919L);
            }
            ghosts.inserted(42);
            ghosts.inserted(43);
            assertThat(ghosts.windowHits()).isZero();
            assertThat(ghosts.mainHits()).isZero();
        });
    }

    @Test
    void keysThatLeftTheWindowForMainAndKeysNeverEvictedAreNoGhosts() {
        withGhosts(100, ghosts -> {
            ghosts.windowDeparture(5, false);
            ghosts.inserted(5);
            ghosts.inserted(6);
            assertThat(ghosts.windowHits()).isZero();
            assertThat(ghosts.mainHits()).isZero();
        });
    }

    @Test
    void recentGhostsOfManyKeysAreFoundOnTheirSide() {
        // A horizon the tables track in full: most recent ghosts survive the direct-mapped
        // slots' collisions, and none is counted on the wrong side.
        int horizon = GhostLists.MAX_TRACKED;
        withGhosts(horizon, ghosts -> {
            SplittableRandom random = new SplittableRandom(1);
            long[] window = random.longs(horizon / 2).toArray();
            long[] main = random.longs(horizon * 3 / 10).toArray();
            for (long key : window) {
                ghosts.windowDeparture(key, true);
            }
            for (long key : main) {
                ghosts.mainEviction(key);
            }
            for (long key : window) {
                ghosts.inserted(key);
            }
            for (long key : main) {
                ghosts.inserted(key);
            }
            assertThat(ghosts.windowHits()).isBetween(window.length * 6L / 10, (long) window.length);
            assertThat(ghosts.mainHits()).isBetween(main.length * 6L / 10, (long) main.length);
        });
    }

    @Test
    void aLongHorizonSamplesTheKeysAndStaysSmall() {
        long horizon = 1L << 20;
        withGhosts(horizon, ghosts -> {
            assertThat(ghosts.byteSize())
                    .isEqualTo(GhostLists.bytesFor(horizon))
                    .isLessThanOrEqualTo(4 * 1024);
            SplittableRandom random = new SplittableRandom(2);
            long[] keys = random.longs(horizon).toArray();
            for (long key : keys) {
                ghosts.windowDeparture(key, true);
            }
            // Every departure is within the horizon, but only MAX_TRACKED keys of them (one in
            // horizon / MAX_TRACKED) are remembered, in twice as many slots: most survive.
            for (long key : keys) {
                ghosts.inserted(key);
            }
            assertThat(ghosts.windowHits()).isBetween(GhostLists.MAX_TRACKED / 4L, GhostLists.MAX_TRACKED * 2L);
        });
    }

    @Test
    void onlyTheKeysTheListsTrackCanEverBeAHit() {
        // Writers skip recording an insert of a key the lists do not track (NativeCache.recordWrite):
        // that is only safe if such an insert can never count.
        long horizon = 32L * GhostLists.MAX_TRACKED; // one key in 32 tracked
        withGhosts(horizon, ghosts -> {
            SplittableRandom random = new SplittableRandom(3);
            long[] keys = random.longs(2_000).toArray();
            long tracked = 0;
            for (long key : keys) {
                long before = ghosts.windowHits() + ghosts.mainHits();
                ghosts.windowDeparture(key, true);
                ghosts.mainEviction(key);
                ghosts.inserted(key); // a ghost on both sides, just now: a hit on both if tracked
                long hits = ghosts.windowHits() + ghosts.mainHits() - before;
                if (ghosts.tracks(key)) {
                    tracked++;
                    assertThat(hits).as("tracked key %d", key).isEqualTo(2);
                } else {
                    assertThat(hits).as("untracked key %d", key).isZero();
                }
            }
            assertThat(tracked).isBetween(2_000L / 32 / 2, 2_000L / 32 * 2);
        });
        withGhosts(GhostLists.MAX_TRACKED, ghosts -> assertThat(ghosts.tracks(12345))
                .as("a short horizon tracks every key")
                .isTrue());
    }

    @Test
    void memoryIsReturnedAndUseAfterFreeThrows() {
        long before = NativeMemory.outstandingBytes();
        GhostLists ghosts = new GhostLists(GhostLists.MAX_TRACKED); // every key tracked
        assertThat(NativeMemory.outstandingBytes() - before).isEqualTo(GhostLists.bytesFor(GhostLists.MAX_TRACKED));
        ghosts.free();
        ghosts.free(); // idempotent
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
        assertThatThrownBy(() -> {
                    for (long key = 0; key < 64; key++) {
                        ghosts.mainEviction(key); // written: the freed table throws
                    }
                })
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void rejectsANonPositiveHorizon() {
        assertThatThrownBy(() -> new GhostLists(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("horizon");
    }
}
