package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

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
}
