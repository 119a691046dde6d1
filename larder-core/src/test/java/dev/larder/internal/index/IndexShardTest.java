package dev.larder.internal.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.internal.concurrent.ReaderEpochs;
import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.RecordLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of one index shard against a {@link HashMap} model, with real records in a real
 * page store: lookups under the lock and lock-free, Robin Hood placement, backward-shift
 * deletion, growth, and lock-free readers racing a writer.
 */
class IndexShardTest {

    enum Kind {
        PUT,
        REMOVE,
        GROW,
        CLEAR
    }

    record Op(Kind kind, int key, int valueLength, boolean expires) {}

    /** Where the model says a key's record is. */
    record Entry(long location, int bytes) {}

    /** A shard plus everything the test knows it should hold. */
    static final class Model {
        final ShardFixture f;
        final IndexShard shard;
        final double maxLoad;
        final Map<Integer, Entry> entries = new HashMap<>();
        int capacity;
        int growths;

        Model(ShardFixture f, int initialCapacity, double maxLoad) {
            this.f = f;
            this.maxLoad = maxLoad;
            long before = f.budget.used();
            this.shard = new IndexShard(initialCapacity, maxLoad, f.budget);
            this.capacity = Math.max(IndexShard.MIN_CAPACITY, initialCapacity);
            assertThat(f.budget.used() - before).isEqualTo(capacity * 8L);
        }

        void put(int key, int valueLength, boolean expires) {
            int slot = shard.slotOf(f.hashes[key], f.store, f.keys[key], f.keys[key].length, new RecordLayout.Header());
            long location = f.write(key, valueLength, expires);
            int bytes = f.recordBytes(location, key, valueLength, expires);
            Entry old = entries.get(key);
            if (old != null) {
                assertThat(slot).as("slot of present key %d", key).isNotNegative();
                shard.relocate(slot, location, old.bytes(), bytes);
            } else {
                assertThat(slot).as("slot of absent key %d", key).isEqualTo(-1);
                if (!shard.hasRoomWithoutGrowth()) {
                    grow();
                }
                assertThat(shard.hasRoomWithoutGrowth()).isTrue();
                shard.insert(f.hashes[key], location, bytes);
                assertThat(shard.count()).isLessThanOrEqualTo((int) (capacity * maxLoad));
            }
            entries.put(key, new Entry(location, bytes));
        }

        void remove(int key) {
            int slot = shard.slotOf(f.hashes[key], f.store, f.keys[key], f.keys[key].length, new RecordLayout.Header());
            Entry old = entries.remove(key);
            if (old == null) {
                assertThat(slot).isEqualTo(-1);
                return;
            }
            assertThat(slot).isNotNegative();
            shard.removeAt(slot, old.bytes());
        }

        void grow() {
            int expected = (int) Math.max(capacity + 1L, (long) Math.ceil(capacity * IndexShard.GROWTH));
            assertThat(shard.growthBytes()).isEqualTo(expected * 8L);
            assertThat(f.budget.tryReserve(shard.growthBytes())).isTrue();
            NativeMemory.Block old = shard.grow(f.seed, f.store);
            assertThat(old.segment().byteSize()).isEqualTo(capacity * 8L);
            f.budget.release(old.segment().byteSize());
            old.free();
            capacity = expected;
            growths++;
        }

        void clear() {
            shard.clearAll();
            entries.clear();
        }

        void apply(Op op) {
            switch (op.kind()) {
                case PUT -> put(op.key(), op.valueLength(), op.expires());
                case REMOVE -> remove(op.key());
                case GROW -> grow();
                case CLEAR -> clear();
            }
        }

        /** Checks the whole table and every key of the universe against the model. */
        void verify() {
            assertThat(shard.count()).isEqualTo(entries.size());
            assertThat(shard.liveBytes())
                    .isEqualTo(entries.values().stream().mapToLong(Entry::bytes).sum());
            assertThat(shard.tableBytes()).isEqualTo(capacity * 8L);

            Map<Long, Integer> keyAt = new HashMap<>();
            entries.forEach((k, e) -> keyAt.put(e.location(), k));
            int occupied = 0;
            for (int i = 0; i < capacity; i++) {
                long w = shard.wordAt(i);
                int next = i + 1 == capacity ? 0 : i + 1;
                long nw = shard.wordAt(next);
                if (w == IndexWord.EMPTY) {
                    // after a hole, a word can only be at its home
                    assertThat(nw == IndexWord.EMPTY || IndexWord.dist(nw) == 0)
                            .as("word after the hole at %d is home", i)
                            .isTrue();
                    continue;
                }
                occupied++;
                Integer key = keyAt.get(IndexWord.location(w));
                assertThat(key).as("slot %d leads to a live record", i).isNotNull();
                long h = f.hashes[key];
                assertThat(IndexWord.tag(w)).isEqualTo(IndexWord.tagOf(h));
                int home = IndexWord.homeSlot(h, capacity);
                assertThat(IndexWord.dist(w))
                        .as("dist of key %d in slot %d (home %d)", key, i, home)
                        .isEqualTo(Math.floorMod(i - home, capacity));
                // Growth is judged by maxDist: it must cover every word, those shifted on too.
                assertThat(shard.maxDist()).as("maxDist covers slot %d", i).isGreaterThanOrEqualTo(IndexWord.dist(w));
                if (nw != IndexWord.EMPTY) {
                    assertThat(IndexWord.dist(nw))
                            .as("Robin Hood order at %d", i)
                            .isLessThanOrEqualTo(IndexWord.dist(w) + 1);
                }
            }
            assertThat(occupied).isEqualTo(entries.size());

            for (int k = 0; k < f.size(); k++) {
                long h = f.hashes[k];
                int slot = shard.slotOf(h, f.store, f.keys[k], f.keys[k].length, new RecordLayout.Header());
                long found = shard.find(h, f.store, f.keys[k], f.keys[k].length, new RecordLayout.Header());
                Entry e = entries.get(k);
                if (e == null) {
                    assertThat(slot).as("slotOf absent key %d", k).isEqualTo(-1);
                    assertThat(found).as("find absent key %d", k).isEqualTo(IndexWord.EMPTY);
                } else {
                    assertThat(slot).as("slotOf present key %d", k).isNotNegative();
                    assertThat(IndexWord.location(shard.wordAt(slot))).isEqualTo(e.location());
                    assertThat(found).as("find present key %d", k).isEqualTo(shard.wordAt(slot));
                    assertThat(shard.slotOfLocation(h, e.location())).isEqualTo(slot);
                    assertThat(shard.slotOfLocation(h, e.location() + 1)).isEqualTo(-1);
                }
            }

            long[] locations = shard.locations(new long[0]);
            assertThat(locations).hasSize(entries.size());
            long[] expected = entries.values().stream()
                    .mapToLong(Entry::location)
                    .sorted()
                    .toArray();
            Arrays.sort(locations);
            assertThat(locations).isEqualTo(expected);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Model test

    private static final int PLAIN_KEYS = 60;
    private static final int TAG_GROUPS = 12;
    private static final int UNIVERSE;

    static {
        try (ShardFixture f = new ShardFixture(7, PLAIN_KEYS, TAG_GROUPS, 1 << 20)) {
            UNIVERSE = f.size();
        }
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> keys = Arbitraries.integers().between(0, UNIVERSE - 1);
        Arbitrary<Integer> values = Arbitraries.oneOf(Arbitraries.integers().between(0, 40), Arbitraries.just(200));
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                Tuple.of(60, Kind.PUT), Tuple.of(25, Kind.REMOVE), Tuple.of(5, Kind.GROW), Tuple.of(1, Kind.CLEAR));
        Arbitrary<Op> op = Combinators.combine(kinds, keys, values, Arbitraries.of(true, false))
                .as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(160);
    }

    @Property(tries = 250)
    void agreesWithAHashMap(
            @ForAll("ops") List<Op> ops,
            @ForAll @IntRange(min = 0, max = 40) int initialCapacity,
            @ForAll boolean dense) {
        // The universe is the same for every try (seed 7), so the key indices in ops are valid.
        try (ShardFixture f = new ShardFixture(7, PLAIN_KEYS, TAG_GROUPS, 1 << 20)) {
            Model m = new Model(f, initialCapacity, dense ? IndexShard.HARD_MAX_LOAD : IndexShard.MAX_LOAD);
            m.verify();
            for (Op op : ops) {
                m.apply(op);
                m.verify();
            }
            m.shard.free();
        }
    }

    @Test
    void growsThroughManyStepsWithDeletions() {
        try (ShardFixture f = new ShardFixture(99, 4000, 40, 8 << 20)) {
            Model m = new Model(f, 0, IndexShard.MAX_LOAD);
            SplittableRandom random = new SplittableRandom(5);
            for (int k = 0; k < f.size(); k++) {
                m.put(k, random.nextInt(30), random.nextInt(4) == 0);
                if (k % 3 == 2) {
                    m.remove(random.nextInt(k + 1));
                }
                if (k % 997 == 0) {
                    m.verify();
                }
            }
            m.verify();
            assertThat(m.growths).isGreaterThan(15);
            // The load stays between MAX_LOAD / GROWTH (just grown; less the rounding of the
            // capacity) and MAX_LOAD.
            double load = m.shard.count() / (double) m.capacity;
            assertThat(load).isBetween(IndexShard.MAX_LOAD / IndexShard.GROWTH - 0.02, IndexShard.MAX_LOAD);
            // Remove everything, in random order: backward shifts all the way.
            List<Integer> present = new ArrayList<>(m.entries.keySet());
            java.util.Collections.shuffle(present, new java.util.Random(3));
            for (int i = 0; i < present.size(); i++) {
                m.remove(present.get(i));
                if (i % 500 == 0) {
                    m.verify();
                }
            }
            m.verify();
            assertThat(m.shard.count()).isZero();
            assertThat(m.shard.liveBytes()).isZero();
            m.shard.free();
        }
    }

    @Test
    void fillsToTheHardLimitWithoutGrowing() {
        try (ShardFixture f = new ShardFixture(11, 2000, 0, 2 << 20)) {
            Model m = new Model(f, 1000, IndexShard.MAX_LOAD);
            int k = 0;
            while (m.shard.hasRoomAtHardLimit()) {
                long location = f.write(k, 4, false);
                int bytes = f.recordBytes(location, k, 4, false);
                m.shard.insert(f.hashes[k], location, bytes);
                m.entries.put(k, new Entry(location, bytes));
                k++;
            }
            assertThat(m.shard.hasRoomWithoutGrowth()).isFalse();
            assertThat(k).isGreaterThan(875).isLessThanOrEqualTo(950);
            m.verify();
            m.shard.free();
        }
    }

    @Test
    void refusesATableOverTheBudget() {
        MemoryBudget small = new MemoryBudget(100);
        assertThatThrownBy(() -> new IndexShard(64, IndexShard.MAX_LOAD, small))
                .isInstanceOf(IllegalStateException.class);
        assertThat(small.used()).isZero();
        IndexShard shard = new IndexShard(12, IndexShard.MAX_LOAD, small);
        assertThat(small.used()).isEqualTo(96);
        assertThat(shard.tableBytes()).isEqualTo(96);
        shard.free();
    }

    // ---------------------------------------------------------------------------------------
    // Concurrency: lock-free readers against a writer that moves words

    @Test
    void lockFreeReadersAlwaysFindKeysThatAreAlwaysPresent() throws Exception {
        int stable = 150;
        int churn = 1500;
        try (ShardFixture f = new ShardFixture(31, stable + churn, 0, 4 << 20)) {
            // Two records per stable key (relocated back and forth), one per churn key.
            long[][] stableLocations = new long[stable][2];
            int[][] stableBytes = new int[stable][2];
            long[] churnLocations = new long[churn];
            int[] churnBytes = new int[churn];
            for (int k = 0; k < stable; k++) {
                for (int r = 0; r < 2; r++) {
                    stableLocations[k][r] = f.write(k, r * 3, r == 1);
                    stableBytes[k][r] = f.recordBytes(stableLocations[k][r], k, r * 3, r == 1);
                }
            }
            for (int c = 0; c < churn; c++) {
                churnLocations[c] = f.write(stable + c, 5, false);
                churnBytes[c] = f.recordBytes(churnLocations[c], stable + c, 5, false);
            }

            ReaderEpochs epochs = new ReaderEpochs(4);
            AtomicReference<IndexShard> current = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong lookups = new AtomicLong();
            AtomicLong misses = new AtomicLong();
            AtomicLong wrong = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<IndexShard> shards = new ArrayList<>();

            // First shard, with the stable keys, before any reader starts.
            IndexShard first = new IndexShard(8, IndexShard.MAX_LOAD, f.budget);
            int[] stableRecord = new int[stable];
            List<NativeMemory.Block> retired = new ArrayList<>();
            for (int k = 0; k < stable; k++) {
                insertGrowing(f, first, k, stableLocations[k][0], stableBytes[k][0], retired);
            }
            shards.add(first);
            current.set(first);

            Runnable reader = () -> {
                SplittableRandom random =
                        new SplittableRandom(Thread.currentThread().threadId());
                try {
                    while (!stop.get()) {
                        // mostly keys that are always present: a miss of one is a failure
                        int k = random.nextInt(4) == 0 ? random.nextInt(stable + churn) : random.nextInt(stable);
                        int token = epochs.enter();
                        try {
                            IndexShard shard = current.get();
                            long w = shard.find(
                                    f.hashes[k], f.store, f.keys[k], f.keys[k].length, new RecordLayout.Header());
                            if (w == IndexWord.EMPTY) {
                                if (k < stable) {
                                    misses.incrementAndGet();
                                }
                            } else if (!f.store.keyEquals(
                                            IndexWord.location(w),
                                            f.keys[k],
                                            f.keys[k].length,
                                            new RecordLayout.Header())
                                    || IndexWord.tag(w) != IndexWord.tagOf(f.hashes[k])) {
                                wrong.incrementAndGet();
                            }
                        } finally {
                            epochs.exit(token);
                        }
                        lookups.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            };
            Thread[] readers = {new Thread(reader, "reader-1"), new Thread(reader, "reader-2")};
            for (Thread t : readers) {
                t.start();
            }

            long writerOps = 0;
            int rounds = 0;
            SplittableRandom random = new SplittableRandom(17);
            long end = System.nanoTime() + 1_200_000_000L;
            try {
                while (System.nanoTime() < end && failure.get() == null) {
                    IndexShard shard = current.get();
                    boolean[] present = new boolean[churn];
                    int presentCount = 0;
                    // One round: churn until the table has grown a lot, then start a fresh shard.
                    while (shard.tableBytes() < 8_000 && System.nanoTime() < end) {
                        shard.lock();
                        try {
                            int action = random.nextInt(10);
                            if (action < 5) {
                                int c = random.nextInt(churn);
                                if (!present[c]) {
                                    insertGrowing(f, shard, stable + c, churnLocations[c], churnBytes[c], retired);
                                    present[c] = true;
                                    presentCount++;
                                }
                            } else if (action < 8) {
                                int c = random.nextInt(churn);
                                if (present[c]) {
                                    int k = stable + c;
                                    int slot = shard.slotOf(
                                            f.hashes[k],
                                            f.store,
                                            f.keys[k],
                                            f.keys[k].length,
                                            new RecordLayout.Header());
                                    shard.removeAt(slot, churnBytes[c]);
                                    present[c] = false;
                                    presentCount--;
                                }
                            } else {
                                int k = random.nextInt(stable);
                                int slot = shard.slotOf(
                                        f.hashes[k], f.store, f.keys[k], f.keys[k].length, new RecordLayout.Header());
                                assertThat(slot).isNotNegative();
                                int next = 1 - stableRecord[k];
                                shard.relocate(
                                        slot, stableLocations[k][next], stableBytes[k][1 - next], stableBytes[k][next]);
                                stableRecord[k] = next;
                            }
                        } finally {
                            shard.unlock();
                        }
                        writerOps++;
                    }
                    assertThat(shard.count()).isEqualTo(stable + presentCount);
                    // Retire this shard: a fresh one with the stable keys replaces it.
                    IndexShard fresh = new IndexShard(8, IndexShard.MAX_LOAD, f.budget);
                    for (int k = 0; k < stable; k++) {
                        insertGrowing(
                                f,
                                fresh,
                                k,
                                stableLocations[k][stableRecord[k]],
                                stableBytes[k][stableRecord[k]],
                                retired);
                    }
                    shards.add(fresh);
                    current.set(fresh);
                    rounds++;
                    epochs.synchronize();
                    for (NativeMemory.Block b : retired) {
                        f.budget.release(b.segment().byteSize());
                        b.free();
                    }
                    retired.clear();
                    for (int i = 0; i < shards.size() - 1; i++) {
                        f.budget.release(shards.get(i).tableBytes());
                        shards.get(i).free();
                    }
                    shards.subList(0, shards.size() - 1).clear();
                }
            } finally {
                stop.set(true);
                for (Thread t : readers) {
                    t.join(10_000);
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("reader failed", failure.get());
            }
            assertThat(misses.get())
                    .as("stable keys not found by lock-free readers")
                    .isZero();
            assertThat(wrong.get()).as("words leading to another key").isZero();
            assertThat(lookups.get()).isGreaterThan(10_000);
            assertThat(writerOps).isGreaterThan(10_000);
            assertThat(rounds).isGreaterThan(1);
            for (NativeMemory.Block b : retired) {
                b.free();
            }
            shards.forEach(IndexShard::free);
        }
    }

    /**
     * The adversarial case for the seq retry: every key has the same tag, so a reader compares
     * key bytes at every step, and every home slot is in the first few slots, so all words form
     * one long cluster that the writer keeps shifting back and forth under the readers' feet.
     * The hashes are made up (valid as long as the table never grows, which rehashes from the
     * records).
     */
    @Test
    void lockFreeReadersFindEveryKeyOfOneLongClusterOfEqualTags() throws Exception {
        int stable = 60;
        int churn = 100;
        int n = stable + churn;
        byte[][] keys = new byte[n][];
        for (int i = 0; i < n; i++) {
            keys[i] = new byte[64];
            Arrays.fill(keys[i], (byte) 0x42);
            keys[i][60] = (byte) (i >>> 24);
            keys[i][61] = (byte) (i >>> 16);
            keys[i][62] = (byte) (i >>> 8);
            keys[i][63] = (byte) i;
        }
        int capacity = 512;
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            hashes[i] = (0xBEEFL << IndexWord.TAG_SHIFT) | ((i * 0x9E3779B9L) & 0x07FF_FFFFL); // home 0..15
            assertThat(IndexWord.homeSlot(hashes[i], capacity)).isLessThan(16);
        }
        try (ShardFixture f = new ShardFixture(5, keys, 1 << 20)) {
            long[] locations = new long[n];
            int[] bytes = new int[n];
            for (int i = 0; i < n; i++) {
                locations[i] = f.write(i, 8, i % 2 == 0);
                bytes[i] = f.recordBytes(locations[i], i, 8, i % 2 == 0);
            }
            IndexShard shard = new IndexShard(capacity, IndexShard.HARD_MAX_LOAD, f.budget);
            for (int k = 0; k < stable; k++) {
                shard.insert(hashes[k], locations[k], bytes[k]);
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong lookups = new AtomicLong();
            AtomicLong misses = new AtomicLong();
            AtomicLong wrong = new AtomicLong();
            Runnable reader = () -> {
                SplittableRandom random =
                        new SplittableRandom(Thread.currentThread().threadId());
                long mine = 0;
                while (!stop.get()) {
                    int k = random.nextInt(stable);
                    long w = shard.find(hashes[k], f.store, f.keys[k], keys[k].length, new RecordLayout.Header());
                    if (w == IndexWord.EMPTY) {
                        misses.incrementAndGet();
                    } else if (IndexWord.location(w) != locations[k]) {
                        wrong.incrementAndGet();
                    }
                    mine++;
                }
                lookups.addAndGet(mine);
            };
            Thread[] readers = {new Thread(reader, "reader-1"), new Thread(reader, "reader-2")};
            for (Thread t : readers) {
                t.start();
            }
            boolean[] present = new boolean[churn];
            SplittableRandom random = new SplittableRandom(23);
            long moves = 0;
            // 0.8 s and at least 10,000 moves, however slow a shared machine is (bounded).
            long start = System.nanoTime();
            long end = start + 800_000_000L;
            long limit = start + 30_000_000_000L;
            try {
                while (System.nanoTime() < limit && (System.nanoTime() < end || moves < 10_000)) {
                    int c = random.nextInt(churn);
                    int k = stable + c;
                    shard.lock();
                    try {
                        if (present[c]) {
                            shard.removeAt(
                                    shard.slotOf(
                                            hashes[k], f.store, f.keys[k], keys[k].length, new RecordLayout.Header()),
                                    bytes[k]);
                        } else {
                            assertThat(shard.hasRoomAtHardLimit()).isTrue();
                            shard.insert(hashes[k], locations[k], bytes[k]);
                        }
                    } finally {
                        shard.unlock();
                    }
                    present[c] = !present[c];
                    moves++;
                }
            } finally {
                stop.set(true);
                for (Thread t : readers) {
                    t.join(10_000);
                }
            }
            assertThat(misses.get())
                    .as("always-present keys missed by lock-free readers")
                    .isZero();
            assertThat(wrong.get()).isZero();
            assertThat(lookups.get()).isGreaterThan(1000);
            assertThat(moves).isGreaterThan(1000);
            shard.free();
        }
    }

    /** Inserts under the lock, growing first when needed (old tables go to {@code retired}). */
    private static void insertGrowing(
            ShardFixture f, IndexShard shard, int key, long location, int bytes, List<NativeMemory.Block> retired) {
        shard.lock();
        try {
            if (!shard.hasRoomWithoutGrowth()) {
                assertThat(f.budget.tryReserve(shard.growthBytes())).isTrue();
                retired.add(shard.grow(f.seed, f.store));
            }
            shard.insert(f.hashes[key], location, bytes);
        } finally {
            shard.unlock();
        }
    }
}
