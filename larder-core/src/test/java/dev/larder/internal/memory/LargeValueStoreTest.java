package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LargeValueStoreTest {

    // The first tests are of a store that keeps no freed extent (pool limit 0): exact sizes, and
    // a free returns the budget at once. Those after them are of the pool.

    @Test
    void allocateReservesBudgetAndGivesZeroedExtents() {
        MemoryBudget budget = new MemoryBudget(100_000);
        LargeValueStore store = new LargeValueStore(budget, 0);
        long a = store.allocate(10_000);
        long b = store.allocate(0); // at least 8 bytes
        long c = store.allocate(3);
        assertThat(a).isNotNegative();
        assertThat(Set.of(a, b, c)).hasSize(3);
        assertThat(budget.used()).isEqualTo(10_000 + 8 + 8);
        assertThat(store.bytes()).isEqualTo(budget.used());
        assertThat(store.segment(a, 10_000).byteSize()).isEqualTo(10_000);
        assertThat(store.segment(a, 500).byteSize()).isEqualTo(500);
        assertThat(store.segment(b).byteSize()).isEqualTo(8);
        MemorySegment sa = store.segment(a);
        for (long i = 0; i < sa.byteSize(); i++) {
            assertThat(sa.get(ValueLayout.JAVA_BYTE, i)).isZero();
        }
        // Extents are distinct memory.
        sa.fill((byte) 1);
        assertThat(store.segment(c).get(ValueLayout.JAVA_BYTE, 0)).isZero();

        // Over the budget: -1 and nothing reserved.
        long before = budget.used();
        assertThat(store.allocate(100_000)).isEqualTo(-1);
        assertThat(budget.used()).isEqualTo(before);
        assertThat(store.bytes()).isEqualTo(before);
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThat(store.bytes()).isZero();
    }

    @Test
    void retiredExtentsStayUntilFreed() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        LargeValueStore store = new LargeValueStore(budget, 0);
        assertThat(store.hasRetired()).isFalse();
        assertThat(store.takeRetired()).isEmpty();
        long a = store.allocate(1000);
        long b = store.allocate(2000);
        long c = store.allocate(3000);
        store.retire(c);
        store.retire(a);
        assertThat(store.hasRetired()).isTrue();
        // Retired is not freed: a reader may still be copying the value.
        assertThat(budget.used()).isEqualTo(6000);
        store.segment(a).fill((byte) 9);

        long[] retired = store.takeRetired();
        assertThat(retired).containsExactly(c, a);
        assertThat(store.hasRetired()).isFalse();
        assertThat(store.takeRetired()).isEmpty();
        MemorySegment sa = store.segment(a);
        for (long id : retired) {
            store.free(id);
        }
        assertThat(budget.used()).isEqualTo(2000);
        assertThat(store.bytes()).isEqualTo(2000);
        // A late access to a freed extent throws, never reads freed memory.
        assertThatThrownBy(() -> sa.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
        // Freeing again is a no-op: the budget is not released twice.
        store.free(a);
        assertThat(budget.used()).isEqualTo(2000);
        store.free(b);
        assertThat(budget.used()).isZero();
        assertThat(store.bytes()).isZero();
        store.freeAll();
    }

    @Test
    void retireGrowsPastItsInitialArray() {
        LargeValueStore store = new LargeValueStore(new MemoryBudget(1 << 20));
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            long id = store.allocate(100);
            ids.add(id);
            store.retire(id);
        }
        long[] retired = store.takeRetired();
        assertThat(retired).hasSize(40);
        for (int i = 0; i < 40; i++) {
            assertThat(retired[i]).isEqualTo(ids.get(i));
        }
        store.freeAll();
    }

    @Test
    void freedIdsAreReused() {
        MemoryBudget budget = new MemoryBudget(1 << 24);
        LargeValueStore store = new LargeValueStore(budget, 0);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 100; i++) { // past the initial 16 slots
            long id = store.allocate(64 + i);
            ids.add(id);
            store.segment(id).fill((byte) i);
        }
        assertThat(new HashSet<>(ids)).hasSize(100);
        assertThat(ids).allMatch(id -> id >= 0 && id < 100);
        for (int i = 0; i < 100; i++) {
            assertThat(store.segment(ids.get(i)).get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) i);
        }
        Set<Long> freed = new HashSet<>();
        for (int i = 0; i < 100; i += 2) {
            store.free(ids.get(i));
            freed.add(ids.get(i));
        }
        Set<Long> reused = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            reused.add(store.allocate(10));
        }
        assertThat(reused).as("the freed ids, no new ones").isEqualTo(freed);
        long fresh = store.allocate(10);
        assertThat(fresh).isEqualTo(100);
        // The survivors were not disturbed.
        for (int i = 1; i < 100; i += 2) {
            assertThat(store.segment(ids.get(i)).get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) i);
        }
        // Churn: ids stay bounded by the number of live extents.
        for (int round = 0; round < 1000; round++) {
            long id = store.allocate(8);
            assertThat(id).isLessThanOrEqualTo(101);
            store.free(id);
        }
        long expected = 0;
        for (int i = 1; i < 100; i += 2) {
            expected += 64 + i;
        }
        expected += 50 * 10 + 10;
        assertThat(store.bytes()).isEqualTo(expected);
        assertThat(budget.used()).isEqualTo(expected);
        store.freeAll();
        assertThat(budget.used()).isZero();
    }

    @Test
    void closedStoreRefusesAllocationsAndFreeIsANoOp() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        LargeValueStore store = new LargeValueStore(budget);
        long a = store.allocate(100);
        store.retire(a);
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThat(store.hasRetired()).isFalse();
        store.free(a); // the evictor finishing late
        assertThat(budget.used()).isZero();
        assertThatThrownBy(() -> store.allocate(10)).isInstanceOf(IllegalStateException.class);
        assertThat(budget.used()).isZero();
    }

    @Test
    void sizeClassesAreSixteenPerDoublingAndCoverEveryLength() {
        assertThat(LargeValueStore.classSize(LargeValueStore.ceilClass(16_384))).isEqualTo(16_384);
        assertThat(LargeValueStore.classSize(LargeValueStore.ceilClass(16_385))).isEqualTo(17_408);
        assertThat(LargeValueStore.classSize(LargeValueStore.ceilClass(1))).isEqualTo(16);
        for (long length = 1; length < 1 << 22; length = length * 5 / 4 + 1) {
            long size = LargeValueStore.classSize(LargeValueStore.ceilClass(length));
            assertThat(size).as("class of %d", length).isGreaterThanOrEqualTo(length);
            assertThat(size).as("class of %d", length).isLessThanOrEqualTo(Math.max(16, length + length / 16));
        }
    }

    @Test
    void aFreedExtentIsKeptForTheNextValueOfItsClass() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        LargeValueStore store = new LargeValueStore(budget, 1 << 17);
        long a = store.allocate(16_000);
        MemorySegment first = store.segment(a);
        assertThat(first.byteSize()).isEqualTo(16_384);
        assertThat(budget.used()).isEqualTo(16_384);
        store.free(a);
        assertThat(store.pooledBytes()).isEqualTo(16_384);
        assertThat(store.bytes()).isZero();
        assertThat(budget.used()).as("kept, still reserved").isEqualTo(16_384);
        first.fill((byte) 7); // still open: kept, not freed

        long b = store.allocate(16_100); // the same class (15,873 to 16,384 bytes)
        assertThat(store.segment(b).address()).isEqualTo(first.address());
        assertThat(store.pooledBytes()).isZero();
        assertThat(budget.used()).isEqualTo(16_384);
        assertThat(store.segment(b, 16_100).byteSize()).isEqualTo(16_100);

        long c = store.allocate(20_000); // another class: a new extent
        assertThat(store.segment(c).address()).isNotEqualTo(first.address());
        assertThat(budget.used()).isEqualTo(16_384 + 20_480);
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThatThrownBy(() -> first.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void keptExtentsStayUnderThePoolLimitAndGiveWayToReservations() {
        MemoryBudget budget = new MemoryBudget(200_000);
        LargeValueStore store = new LargeValueStore(budget, 40_000);
        long[] ids = new long[8];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = store.allocate(16_384);
        }
        assertThat(budget.used()).isEqualTo(8 * 16_384);
        for (long id : ids) {
            store.free(id);
        }
        assertThat(store.pooledBytes()).as("two of eight kept").isEqualTo(2 * 16_384);
        assertThat(budget.used()).isEqualTo(2 * 16_384);

        // Pages or the index need the budget: kept extents are freed, as many as that takes.
        assertThat(budget.tryReserve(180_000)).isFalse();
        store.releasePooled(180_000);
        assertThat(store.pooledBytes()).as("one freed was enough").isEqualTo(16_384);
        assertThat(budget.tryReserve(180_000)).isTrue();
        budget.release(180_000);
        store.releasePooled(Long.MAX_VALUE);
        assertThat(store.pooledBytes()).isZero();
        assertThat(budget.used()).isZero();
        budget.tryReserve(180_000);

        // A value that finds the budget held by kept extents frees them rather than fail.
        budget.release(180_000);
        long x = store.allocate(16_384);
        long y = store.allocate(16_384);
        store.free(x);
        store.free(y);
        assertThat(store.pooledBytes()).isEqualTo(2 * 16_384);
        assertThat(budget.tryReserve(200_000 - 2 * 16_384)).isTrue();
        long z = store.allocate(30_000); // another class: only the kept extents' budget is left
        assertThat(z).isNotNegative();
        assertThat(store.pooledBytes()).isZero();
        store.freeAll();
        budget.release(200_000 - 2 * 16_384);
        assertThat(budget.used()).isZero();
    }
}
