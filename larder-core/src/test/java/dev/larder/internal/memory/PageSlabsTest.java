package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pages carved from advised huge-page slabs: where each page lives, zeroes, and memory returned. */
class PageSlabsTest {
    private static final int PAGE = 128 * 1024;
    private static final int PER_SLAB = (int) (NativeMemory.HUGE_PAGE / PAGE);

    @BeforeEach
    void linuxOnly() {
        assumeTrue(HugePageMapping.supported(), "Linux on x86-64 or aarch64");
    }

    @Test
    void aPageLivesAtItsPlaceInItsSlabAndSlabsAreMappedAsTheirFirstPageIsTaken() {
        long before = NativeMemory.outstandingBytes();
        PageSlabs slabs = new PageSlabs(PAGE, 3 * PER_SLAB);
        try {
            MemorySegment first = slabs.take(0);
            assertThat(first.address() % NativeMemory.HUGE_PAGE).isZero();
            assertThat(first.byteSize()).isEqualTo(PAGE);
            assertThat(slabs.mappedSlabs()).isEqualTo(1);
            for (int id = 1; id < PER_SLAB; id++) {
                MemorySegment page = slabs.take(id);
                assertThat(page.address() - first.address()).as("page %d", id).isEqualTo((long) id * PAGE);
                assertThat(page.get(ValueLayout.JAVA_LONG, PAGE - 8)).isZero();
            }
            assertThat(slabs.mappedSlabs())
                    .as("one slab holds %d pages", PER_SLAB)
                    .isEqualTo(1);
            MemorySegment next = slabs.take(PER_SLAB);
            assertThat(slabs.mappedSlabs()).isEqualTo(2);
            assertThat(next.address() % NativeMemory.HUGE_PAGE).isZero();
            assertThat(NativeMemory.outstandingBytes() - before).isEqualTo(2 * NativeMemory.HUGE_PAGE);
        } finally {
            slabs.freeAll();
        }
        assertThat(slabs.mappedSlabs()).isZero();
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void aPageReleasedWhileItsSlabIsInUseReadsAsZeroWhenTakenAgain() {
        PageSlabs slabs = new PageSlabs(PAGE, PER_SLAB);
        try {
            MemorySegment kept = slabs.take(0);
            MemorySegment page = slabs.take(1);
            kept.fill((byte) 7);
            page.fill((byte) 9);
            slabs.release(1, page);
            assertThat(slabs.mappedSlabs()).as("page 0 still holds the slab").isEqualTo(1);
            MemorySegment again = slabs.take(1);
            assertThat(again.address()).isEqualTo(page.address());
            for (long at = 0; at < PAGE; at += 512) {
                assertThat(again.get(ValueLayout.JAVA_BYTE, at))
                        .as("byte %d", at)
                        .isZero();
            }
            assertThat(kept.get(ValueLayout.JAVA_BYTE, PAGE - 1))
                    .as("the other page of the slab is untouched")
                    .isEqualTo((byte) 7);
        } finally {
            slabs.freeAll();
        }
    }

    @Test
    void theLastPageOfASlabReleasedUnmapsItAndItsPagesThrowAfterwards() {
        long before = NativeMemory.outstandingBytes();
        PageSlabs slabs = new PageSlabs(PAGE, 2 * PER_SLAB);
        MemorySegment[] pages = new MemorySegment[PER_SLAB + 1];
        for (int id = 0; id <= PER_SLAB; id++) {
            pages[id] = slabs.take(id);
        }
        try {
            for (int id = 0; id < PER_SLAB; id++) {
                slabs.release(id, pages[id]);
            }
            assertThat(slabs.mappedSlabs()).isEqualTo(1);
            assertThat(NativeMemory.outstandingBytes() - before).isEqualTo(NativeMemory.HUGE_PAGE);
            assertThatThrownBy(() -> pages[0].get(ValueLayout.JAVA_LONG, 0)).isInstanceOf(IllegalStateException.class);
            MemorySegment retaken = slabs.take(3);
            assertThat(retaken.get(ValueLayout.JAVA_LONG, 0)).isZero();
            assertThat(slabs.mappedSlabs()).isEqualTo(2);
        } finally {
            slabs.freeAll();
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void onlyPagesThatDivideAHugePageInALogOfManySlabsAreCarved() {
        long enough = PageSlabs.MIN_SLABS * NativeMemory.HUGE_PAGE;
        assertThat(PageSlabs.worthIt(PAGE, (int) (enough / PAGE))).isTrue();
        assertThat(PageSlabs.worthIt(PAGE, (int) (enough / PAGE) - 1))
                .as("a log under %d slabs", PageSlabs.MIN_SLABS)
                .isFalse();
        assertThat(PageSlabs.worthIt((int) NativeMemory.HUGE_PAGE, 1024))
                .as("pages of a huge page")
                .isFalse();
        assertThatThrownBy(() -> new PageSlabs((int) NativeMemory.HUGE_PAGE, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pageSize");
    }
}
