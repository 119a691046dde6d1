package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Each thread that uses a cache gets its own index, handed out in turn, which picks its stripe
 * of the access buffers and the log: threads started one after another get different stripes,
 * where hashed thread ids put two of them on one stripe one time in four (with four stripes).
 */
class KeyScratchThreadIndexTest {

    /** The scratch a new thread gets when it first encodes a key. */
    private static KeyScratch scratchOfNewThread() throws InterruptedException {
        KeyScratch[] scratch = new KeyScratch[1];
        Thread t = Thread.ofPlatform().start(() -> {
            KeyScratch ks = KeyScratch.encode(Codecs.utf8(), "key", 100);
            try {
                scratch[0] = ks;
                assertThat(KeyScratch.current()).isSameAs(ks);
            } finally {
                ks.release();
            }
        });
        t.join();
        return scratch[0];
    }

    private static int indexOfNewThread() throws InterruptedException {
        return scratchOfNewThread().threadIndex;
    }

    @Test
    void threadsUsingACacheInTurnGetIndicesInTurn() throws InterruptedException {
        Set<Integer> indices = new HashSet<>();
        int first = indexOfNewThread();
        indices.add(first);
        for (int i = 1; i < 16; i++) {
            int index = indexOfNewThread();
            // Later threads get later numbers (other tests' threads may take some in between).
            assertThat(index).isGreaterThan(first);
            indices.add(index);
        }
        assertThat(indices).as("indices of 16 threads").hasSize(16);
    }

    @Test
    void twoThreadsInARowTakeDifferentStripes() throws InterruptedException {
        // Unless another test's thread took a number in between, two threads in a row are on
        // different stripes of any power of two of them; either way their indices differ.
        KeyScratch a = scratchOfNewThread();
        KeyScratch b = scratchOfNewThread();
        assertThat(b.threadIndex).isNotEqualTo(a.threadIndex);
        if (b.threadIndex == a.threadIndex + 1) {
            for (int stripes = 2; stripes <= 64; stripes *= 2) {
                assertThat(b.stripe(stripes)).isNotEqualTo(a.stripe(stripes));
                assertThat(b.stripe(stripes)).isBetween(0, stripes - 1);
            }
        }
        assertThat(a.stripe(1)).isZero();
    }

    @Test
    void aNestedScratchKeepsItsThreadsIndex() {
        KeyScratch outer = KeyScratch.encode(Codecs.utf8(), "outer", 100);
        try {
            KeyScratch inner = KeyScratch.encode(Codecs.utf8(), "inner", 100);
            try {
                assertThat(inner).isNotSameAs(outer);
                assertThat(inner.threadIndex).isEqualTo(outer.threadIndex);
                assertThat(inner.stripe(8)).isEqualTo(outer.stripe(8));
            } finally {
                inner.release();
            }
        } finally {
            outer.release();
        }
    }
}
