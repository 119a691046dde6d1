package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Shows how to write a {@link Codec} for your own type: fixed-size fields go straight into native
 * memory with {@link ValueLayout}s, variable-size ones reuse a built-in codec, and nothing passes
 * through a temporary heap array on the way in.
 */
class UserCodecExampleTest {

    /** The value type: two ints and a label. */
    record Point(int x, int y, String label) {}

    /**
     * Layout: {@code x} (4 bytes), {@code y} (4 bytes), then the label as UTF-8 filling the rest.
     * The label needs no length prefix because {@link #read} is told the total length.
     */
    static final class PointCodec implements Codec<Point> {
        // Unaligned: the cache may place a value at any byte offset. A fixed byte order keeps the
        // encoding identical on every platform, which matters if the bytes ever leave the process.
        private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final int HEADER = 2 * Integer.BYTES;
        private static final Codec<String> LABEL = Codecs.utf8();

        @Override
        public int size(Point p) {
            return Math.addExact(HEADER, LABEL.size(p.label()));
        }

        @Override
        public void write(Point p, MemorySegment target, long offset) {
            target.set(INT, offset, p.x());
            target.set(INT, offset + Integer.BYTES, p.y());
            LABEL.write(p.label(), target, offset + HEADER);
        }

        @Override
        public Point read(MemorySegment source, long offset, int length) {
            if (length < HEADER) {
                throw new IllegalArgumentException("point codec: " + length + " bytes, need at least " + HEADER);
            }
            int x = source.get(INT, offset);
            int y = source.get(INT, offset + Integer.BYTES);
            return new Point(x, y, LABEL.read(source, offset + HEADER, length - HEADER));
        }

        @Override
        public String toString() {
            return "PointCodec";
        }
    }

    private final Codec<Point> codec = new PointCodec();

    @Test
    void roundTripsThroughNativeMemory() {
        Point point = new Point(3, -7, "caf\u00e9 \ud83d\ude00");
        int size = codec.size(point);
        assertThat(size).isEqualTo(8 + point.label().getBytes(StandardCharsets.UTF_8).length);

        try (Arena arena = Arena.ofConfined()) {
            // Room for the entry at an odd offset, with a guard byte on each side.
            MemorySegment memory = arena.allocate(size + 5);
            memory.fill((byte) 0x5A);
            codec.write(point, memory, 3);

            assertThat(memory.get(ValueLayout.JAVA_BYTE, 2)).isEqualTo((byte) 0x5A);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 3L + size)).isEqualTo((byte) 0x5A);
            assertThat(memory.asSlice(3, 8).toArray(ValueLayout.JAVA_BYTE))
                    .containsExactly(0, 0, 0, 3, 0xFF, 0xFF, 0xFF, 0xF9);

            // The cache hands codecs a read-only view; the result must not depend on it afterwards.
            Point back = codec.read(memory.asReadOnly(), 3, size);
            assertThat(back).isEqualTo(point);
        }
    }

    @Property(tries = 200)
    void roundTripsAnyPoint(
            @ForAll int x, @ForAll int y, @ForAll String label, @ForAll @IntRange(max = 15) int offset) {
        // A label with an unpaired surrogate comes back with '?' in its place, as with getBytes.
        Point point = new Point(x, y, label);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(offset + codec.size(point));
            codec.write(point, memory, offset);
            assertThat(codec.read(memory.asReadOnly(), offset, codec.size(point)))
                    .isEqualTo(new Point(
                            x, y, new String(label.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)));
        }
    }

    @Test
    void rejectsTruncatedInput() {
        MemorySegment memory = MemorySegment.ofArray(new byte[7]).asReadOnly();
        assertThatThrownBy(() -> codec.read(memory, 0, 7))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("need at least 8");
    }
}
