package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class NativeMemoryTest {

    @Test
    void blocksOfWholeHugePagesAreAlignedToOne() {
        long before = NativeMemory.outstandingBytes();
        for (long bytes : new long[] {NativeMemory.HUGE_PAGE, 2 * NativeMemory.HUGE_PAGE, 4 * NativeMemory.HUGE_PAGE}) {
            NativeMemory.Block block = NativeMemory.allocate(bytes);
            try {
                assertThat(block.segment().byteSize()).isEqualTo(bytes);
                assertThat(block.segment().address() % NativeMemory.HUGE_PAGE)
                        .as("address of a %d-byte block", bytes)
                        .isZero();
                // Zeroed and writable end to end.
                assertThat(block.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, bytes - 8))
                        .isZero();
                block.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, bytes - 8, -1L);
                assertThat(NativeMemory.outstandingBytes() - before).isEqualTo(bytes);
            } finally {
                block.free();
            }
            assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
        }
    }

    @Test
    void otherBlocksHaveExactlyTheirSizeAndAreEightByteAligned() {
        long before = NativeMemory.outstandingBytes();
        for (long bytes : new long[] {8, 4096, NativeMemory.HUGE_PAGE - 8, NativeMemory.HUGE_PAGE + 8, 3 << 20}) {
            NativeMemory.Block block = NativeMemory.allocate(bytes);
            try {
                assertThat(block.segment().byteSize()).isEqualTo(bytes);
                assertThat(block.segment().address() % 8).isZero();
            } finally {
                block.free();
            }
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void advisedBlocksAreAlignedZeroedAdvisedAndUnmappedOnFree() throws IOException {
        assumeTrue(HugePageMapping.supported(), "Linux on x86-64 or aarch64");
        long before = NativeMemory.outstandingBytes();
        long bytes = 2 * NativeMemory.HUGE_PAGE;
        NativeMemory.Block block = NativeMemory.allocate(bytes, true);
        MemorySegment segment = block.segment();
        try {
            assertThat(segment.byteSize()).isEqualTo(bytes);
            assertThat(segment.address() % NativeMemory.HUGE_PAGE).isZero();
            for (long at = 0; at < bytes; at += 4096) {
                assertThat(segment.get(ValueLayout.JAVA_LONG, at))
                        .as("word at %d", at)
                        .isZero();
            }
            segment.set(ValueLayout.JAVA_LONG, 0, 7L);
            segment.set(ValueLayout.JAVA_LONG, bytes - 8, -1L);
            assertThat(segment.get(ValueLayout.JAVA_LONG, bytes - 8)).isEqualTo(-1L);
            assertThat(NativeMemory.outstandingBytes() - before).isEqualTo(bytes);
            List<String> flags = vmFlagsOfMappingAt(segment.address());
            assumeTrue(flags != null, "/proc/self/smaps readable");
            assertThat(flags).as("the mapping's VmFlags").contains("hg"); // MADV_HUGEPAGE
        } finally {
            block.free();
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
        assertThatThrownBy(() -> segment.get(ValueLayout.JAVA_LONG, 0)).isInstanceOf(IllegalStateException.class);
        assertThat(vmFlagsOfMappingAt(segment.address()))
                .as("no mapping at the address once freed")
                .isNull();
    }

    @Test
    void blocksUnderAHugePageAreOrdinaryEvenWhenAdvised() throws IOException {
        long before = NativeMemory.outstandingBytes();
        for (long bytes : new long[] {4096, NativeMemory.HUGE_PAGE - 8}) {
            NativeMemory.Block block = NativeMemory.allocate(bytes, true);
            try {
                assertThat(block.segment().byteSize()).isEqualTo(bytes);
                assertThat(block.segment().get(ValueLayout.JAVA_LONG, bytes - 8))
                        .isZero();
                List<String> flags = vmFlagsOfMappingAt(block.segment().address());
                if (flags != null) {
                    assertThat(flags).as("VmFlags of a %d-byte block", bytes).doesNotContain("hg");
                }
            } finally {
                block.free();
            }
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void anAdvisedBlockOfPartHugePagesAdvisesOnlyItsWholeHugePages() throws IOException {
        assumeTrue(HugePageMapping.supported(), "Linux on x86-64 or aarch64");
        long before = NativeMemory.outstandingBytes();
        long bytes = 3 * NativeMemory.HUGE_PAGE / 2 + 8; // one whole huge page, then 1 MiB and 8 bytes
        NativeMemory.Block block = NativeMemory.allocate(bytes, true);
        MemorySegment segment = block.segment();
        try {
            assertThat(segment.byteSize()).isEqualTo(bytes);
            assertThat(segment.address() % NativeMemory.HUGE_PAGE).isZero();
            assertThat(segment.get(ValueLayout.JAVA_LONG, bytes - 8)).isZero();
            segment.set(ValueLayout.JAVA_LONG, bytes - 8, 5L);
            List<String> head = vmFlagsOfMappingAt(segment.address());
            assumeTrue(head != null, "/proc/self/smaps readable");
            assertThat(head).as("the whole huge page").contains("hg");
            assertThat(vmFlagsOfMappingAt(segment.address() + NativeMemory.HUGE_PAGE))
                    .as("the part after it, which a huge page would more than cover")
                    .doesNotContain("hg");
            assertThatThrownBy(() -> segment.get(ValueLayout.JAVA_LONG, bytes))
                    .isInstanceOf(IndexOutOfBoundsException.class);
        } finally {
            block.free();
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void aSliceOfAnAdvisedBlockGivesItsMemoryBackAndLeavesTheBlockMapped() {
        assumeTrue(HugePageMapping.supported(), "Linux on x86-64 or aarch64");
        long before = NativeMemory.outstandingBytes();
        NativeMemory.Block region = NativeMemory.allocate(NativeMemory.HUGE_PAGE, true);
        NativeMemory.Block slice = NativeMemory.Block.slice(region, 3 * 4096, 5 * 4096);
        NativeMemory.Block unaligned = NativeMemory.Block.slice(region, 100, 200);
        try {
            assertThat(slice.segment().address() - region.segment().address()).isEqualTo(3 * 4096);
            assertThat(NativeMemory.outstandingBytes() - before)
                    .as("a slice is not memory of its own")
                    .isEqualTo(NativeMemory.HUGE_PAGE);
            region.segment().fill((byte) 1);
            slice.free();
            assertThat(slice.segment().get(ValueLayout.JAVA_LONG, 0))
                    .as("given back")
                    .isZero();
            assertThat(slice.segment().get(ValueLayout.JAVA_LONG, 5 * 4096 - 8)).isZero();
            assertThat(region.segment().get(ValueLayout.JAVA_BYTE, 3 * 4096 - 1))
                    .as("just before the slice")
                    .isEqualTo((byte) 1);
            assertThat(region.segment().get(ValueLayout.JAVA_BYTE, 8 * 4096))
                    .as("just after")
                    .isEqualTo((byte) 1);
            unaligned.free(); // no whole small page in it: nothing to give back
            assertThat(unaligned.segment().get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 1);
        } finally {
            region.free();
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
        slice.free(); // after its region: nothing left to do, and no advice on memory not ours
        assertThatThrownBy(() -> slice.segment().get(ValueLayout.JAVA_LONG, 0))
                .isInstanceOf(IllegalStateException.class);
    }

    /** The VmFlags of the mapping that holds {@code address} in /proc/self/smaps, or null if none does. */
    private static List<String> vmFlagsOfMappingAt(long address) throws IOException {
        Path smaps = Path.of("/proc/self/smaps");
        if (!Files.isReadable(smaps)) {
            return null;
        }
        boolean inside = false;
        for (String line : Files.readAllLines(smaps)) {
            String[] range = line.split(" ", 2)[0].split("-");
            if (range.length == 2 && range[0].matches("[0-9a-f]+") && range[1].matches("[0-9a-f]+")) {
                long start = Long.parseUnsignedLong(range[0], 16);
                long end = Long.parseUnsignedLong(range[1], 16);
                inside = address >= start && address < end;
            } else if (inside && line.startsWith("VmFlags:")) {
                return List.of(line.substring("VmFlags:".length()).trim().split("\\s+"));
            }
        }
        return null;
    }
}
