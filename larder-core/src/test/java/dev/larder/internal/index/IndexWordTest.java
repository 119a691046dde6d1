package dev.larder.internal.index;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Unit tests of the packing of index words and of the hash's three uses. */
class IndexWordTest {

    @Provide
    Arbitrary<Long> tags() {
        return Arbitraries.oneOf(
                Arbitraries.of(0L, 1L, 0x8000L, 0xFFFFL), Arbitraries.longs().between(0, 0xFFFF));
    }

    @Provide
    Arbitrary<Integer> dists() {
        return Arbitraries.oneOf(
                Arbitraries.of(0, 1, 127, 128, IndexWord.MAX_DIST),
                Arbitraries.integers().between(0, IndexWord.MAX_DIST));
    }

    @Provide
    Arbitrary<Long> locations() {
        return Arbitraries.oneOf(
                Arbitraries.of(0L, 1L, 1L << 39, IndexWord.MAX_LOCATION),
                Arbitraries.longs().between(0, IndexWord.MAX_LOCATION));
    }

    @Provide
    Arbitrary<Integer> capacities() {
        return Arbitraries.oneOf(
                Arbitraries.of(1, 2, 3, 8, 10, 13, 1000, 1 << 20, Integer.MAX_VALUE / 8, Integer.MAX_VALUE),
                Arbitraries.integers().between(1, Integer.MAX_VALUE));
    }

    @Property(tries = 2000)
    void fieldsRoundTrip(@ForAll("tags") long tag, @ForAll("dists") int dist, @ForAll("locations") long location) {
        long w = IndexWord.word(tag, dist, location);
        assertThat(w).isNotEqualTo(IndexWord.EMPTY);
        assertThat(IndexWord.tag(w)).isEqualTo(tag);
        assertThat(IndexWord.dist(w)).isEqualTo(dist);
        assertThat(IndexWord.location(w)).isEqualTo(location);
    }

    @Property(tries = 2000)
    void aProbeStopsAtAnEmptySlotOrAtAWordNearerItsHome(
            @ForAll("tags") long tag,
            @ForAll("dists") int dist,
            @ForAll("locations") long location,
            @ForAll("dists") int probeDist) {
        assertThat(IndexWord.endsProbe(IndexWord.EMPTY, probeDist)).isTrue();
        assertThat(IndexWord.endsProbe(IndexWord.word(tag, dist, location), probeDist))
                .isEqualTo(dist < probeDist);
    }

    @Property(tries = 2000)
    void withDistAndWithLocationChangeOneFieldOnly(
            @ForAll("tags") long tag,
            @ForAll("dists") int dist,
            @ForAll("locations") long location,
            @ForAll("dists") int otherDist,
            @ForAll("locations") long otherLocation) {
        long w = IndexWord.word(tag, dist, location);

        long d = IndexWord.withDist(w, otherDist);
        assertThat(IndexWord.tag(d)).isEqualTo(tag);
        assertThat(IndexWord.dist(d)).isEqualTo(otherDist);
        assertThat(IndexWord.location(d)).isEqualTo(location);
        assertThat(d).isEqualTo(IndexWord.word(tag, otherDist, location));

        long l = IndexWord.withLocation(w, otherLocation);
        assertThat(IndexWord.tag(l)).isEqualTo(tag);
        assertThat(IndexWord.dist(l)).isEqualTo(dist);
        assertThat(IndexWord.location(l)).isEqualTo(otherLocation);
        assertThat(l).isEqualTo(IndexWord.word(tag, dist, otherLocation));
    }

    @Property(tries = 2000)
    void hashBitsFeedTagShardAndSlotIndependently(@ForAll long hash, @ForAll("capacities") int capacity) {
        long tag = IndexWord.tagOf(hash);
        assertThat(tag).isBetween(0L, 0xFFFFL).isEqualTo(hash >>> 48);
        assertThat(IndexWord.shardBits(hash)).isBetween(0, 0xFFFF).isEqualTo((int) ((hash >>> 32) & 0xFFFF));
        int slot = IndexWord.homeSlot(hash, capacity);
        assertThat(slot).isGreaterThanOrEqualTo(0).isLessThan(capacity);
        // The slot depends on bits 0-31 only.
        assertThat(IndexWord.homeSlot(hash & 0xFFFF_FFFFL, capacity)).isEqualTo(slot);
        assertThat(IndexWord.homeSlot(hash | 0xFFFF_FFFF_0000_0000L, capacity)).isEqualTo(slot);
        // The tag of a word built from the hash is the hash's tag, whatever the location.
        assertThat(IndexWord.tag(IndexWord.word(tag, 0, IndexWord.MAX_LOCATION)))
                .isEqualTo(tag);
    }

    @Test
    void homeSlotSpansTheWholeTableInOrder() {
        for (int capacity : new int[] {1, 7, 8, 10, 1000, 1 << 20, Integer.MAX_VALUE}) {
            assertThat(IndexWord.homeSlot(0, capacity)).isZero();
            assertThat(IndexWord.homeSlot(0xFFFF_FFFFL, capacity)).isEqualTo(capacity - 1);
            int previous = 0;
            for (long low = 0; low <= 0xFFFF_FFFFL; low += 0x0100_0001L) {
                int slot = IndexWord.homeSlot(low, capacity);
                assertThat(slot).isGreaterThanOrEqualTo(previous).isLessThan(capacity);
                previous = slot;
            }
        }
        // Every slot of a small table is somebody's home.
        int capacity = 13;
        boolean[] seen = new boolean[capacity];
        for (long low = 0; low < (1L << 32); low += 1L << 24) {
            seen[IndexWord.homeSlot(low, capacity)] = true;
        }
        for (int s = 0; s < capacity; s++) {
            assertThat(seen[s]).as("slot %d", s).isTrue();
        }
    }

    @Test
    void emptyIsDistinctFromEveryWord() {
        assertThat(IndexWord.word(0, 0, 0)).isNotEqualTo(IndexWord.EMPTY);
        assertThat(IndexWord.dist(IndexWord.EMPTY)).isEqualTo(-1);
        assertThat(IndexWord.MAX_LOCATION).isEqualTo((1L << 40) - 1);
    }
}
