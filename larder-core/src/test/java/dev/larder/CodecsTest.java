package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.testing.AllocationCounter;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CodecsTest {

    private static final byte SENTINEL = (byte) 0xA5;

    // ---------------------------------------------------------------------------------------
    // Helpers

    /**
     * Writes {@code value} at {@code offset} into a sentinel-filled segment with {@code slack}
     * spare bytes after the encoding, checks that exactly {@code expected} was written there and
     * nothing else changed, then reads it back through a read-only view and returns the result.
     */
    private static <T> T writeCheckAndRead(
            Codec<T> codec, T value, byte[] expected, int offset, int slack, boolean nativeMemory) {
        int size = codec.size(value);
        assertThat(size).as("size()").isEqualTo(expected.length);
        long total = (long) offset + size + slack;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = nativeMemory ? arena.allocate(total) : MemorySegment.ofArray(new byte[(int) total]);
            target.fill(SENTINEL);

            codec.write(value, target, offset);

            assertThat(target.asSlice(offset, size).toArray(ValueLayout.JAVA_BYTE))
                    .as("bytes written")
                    .isEqualTo(expected);
            assertUntouched(target, 0, offset);
            assertUntouched(target, offset + size, total);
            return codec.read(target.asReadOnly(), offset, size);
        }
    }

    private static void assertUntouched(MemorySegment segment, long from, long to) {
        for (long i = from; i < to; i++) {
            assertThat(segment.get(ValueLayout.JAVA_BYTE, i))
                    .as("byte %d outside the written range", i)
                    .isEqualTo(SENTINEL);
        }
    }

    private static MemorySegment sentinelSegment(int size) {
        MemorySegment segment = MemorySegment.ofArray(new byte[size]);
        segment.fill(SENTINEL);
        return segment;
    }

    private static byte[] encode(Codec<?> codec, Object value) {
        @SuppressWarnings("unchecked")
        Codec<Object> c = (Codec<Object>) codec;
        MemorySegment target = MemorySegment.ofArray(new byte[c.size(value)]);
        c.write(value, target, 0);
        return target.toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    /** Every codec with a sample value of its type. */
    static Stream<Arguments> codecsWithSample() {
        return Stream.of(
                Arguments.of(Codecs.utf8(), "h\u00e9llo \u20ac \ud83d\ude00", "utf8"),
                Arguments.of(Codecs.latin1(), "h\u00e9llo", "latin1"),
                Arguments.of(Codecs.longs(), 0x0102030405060708L, "longs"),
                Arguments.of(Codecs.ints(), 0x01020304, "ints"),
                Arguments.of(Codecs.bytes(), new byte[] {1, 2, 3, 4, 5}, "bytes"),
                Arguments.of(Codecs.byteBuffers(), ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}), "byteBuffers"),
                Arguments.of(Codecs.segments(), MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5}), "segments"));
    }

    // ---------------------------------------------------------------------------------------
    // Common contract

    @Test
    void factoriesReturnSingletonsWithUsefulToString() {
        assertThat(Codecs.utf8()).isSameAs(Codecs.utf8()).hasToString("Codecs.utf8()");
        assertThat(Codecs.latin1()).isSameAs(Codecs.latin1()).hasToString("Codecs.latin1()");
        assertThat(Codecs.longs()).isSameAs(Codecs.longs()).hasToString("Codecs.longs()");
        assertThat(Codecs.ints()).isSameAs(Codecs.ints()).hasToString("Codecs.ints()");
        assertThat(Codecs.bytes()).isSameAs(Codecs.bytes()).hasToString("Codecs.bytes()");
        assertThat(Codecs.byteBuffers()).isSameAs(Codecs.byteBuffers()).hasToString("Codecs.byteBuffers()");
        assertThat(Codecs.segments()).isSameAs(Codecs.segments()).hasToString("Codecs.segments()");
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void nullValueIsRejectedWithTheCodecsName(Codec<Object> codec, Object sample, String name) {
        MemorySegment target = sentinelSegment(64);
        assertThatThrownBy(() -> codec.size(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining(name);
        assertThatThrownBy(() -> codec.write(null, target, 0))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining(name);
        assertUntouched(target, 0, 64);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void writingToAReadOnlySegmentThrows(Codec<Object> codec, Object sample, String name) {
        MemorySegment backing = sentinelSegment(64);
        MemorySegment readOnly = backing.asReadOnly();
        assertThatThrownBy(() -> codec.write(sample, readOnly, 3)).isInstanceOf(IllegalArgumentException.class);
        assertUntouched(backing, 0, 64);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void writingPastTheEndThrowsAndWritesNothing(Codec<Object> codec, Object sample, String name) {
        int size = codec.size(sample);
        MemorySegment target = sentinelSegment(size + 2);
        assertThatThrownBy(() -> codec.write(sample, target, 3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> codec.write(sample, target, -1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> codec.write(sample, target, Long.MAX_VALUE))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertUntouched(target, 0, size + 2);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void writingAtTheVeryEndFits(Codec<Object> codec, Object sample, String name) {
        int size = codec.size(sample);
        MemorySegment target = sentinelSegment(size + 7);
        codec.write(sample, target, 7);
        assertUntouched(target, 0, 7);
        assertThat(target.asSlice(7).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(encode(codec, sample));
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void readingOutsideTheSourceThrows(Codec<Object> codec, Object sample, String name) {
        int size = codec.size(sample);
        MemorySegment source = MemorySegment.ofArray(encode(codec, sample)).asReadOnly();
        assertThatThrownBy(() -> codec.read(source, 1, size)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> codec.read(source, -1, size)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> codec.read(source, size, size)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> codec.read(source, Long.MAX_VALUE, size))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void readingANegativeLengthThrows(Codec<Object> codec, Object sample, String name) {
        MemorySegment source = MemorySegment.ofArray(new byte[16]).asReadOnly();
        assertThatThrownBy(() -> codec.read(source, 0, -1))
                .isInstanceOfAny(IndexOutOfBoundsException.class, IllegalArgumentException.class);
        assertThatThrownBy(() -> codec.read(source, 0, Integer.MIN_VALUE))
                .isInstanceOfAny(IndexOutOfBoundsException.class, IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("codecsWithSample")
    void roundTripsThroughNativeMemory(Codec<Object> codec, Object sample, String name) {
        byte[] expected = encode(codec, sample);
        Object back = writeCheckAndRead(codec, sample, expected, 5, 3, true);
        assertThat(encode(codec, back)).isEqualTo(expected);
    }

    @Test
    void codecsAreSafeToShareBetweenThreads() {
        List<String> values = IntStream.range(0, 2_000)
                .mapToObj(i -> "k\u00e9y-" + i + "-\u20ac\ud83d\ude00")
                .toList();
        values.parallelStream().forEach(v -> {
            byte[] bytes = encode(Codecs.utf8(), v);
            assertThat(bytes).isEqualTo(v.getBytes(StandardCharsets.UTF_8));
            assertThat(Codecs.utf8().read(MemorySegment.ofArray(bytes), 0, bytes.length))
                    .isEqualTo(v);
        });
    }

    // ---------------------------------------------------------------------------------------
    // utf8

    @Provide
    Arbitrary<String> unicodeStrings() {
        Arbitrary<String> ascii = Arbitraries.chars().range('\u0000', '\u007f').map(String::valueOf);
        Arbitrary<String> twoBytes =
                Arbitraries.chars().range('\u0080', '\u07ff').map(String::valueOf);
        Arbitrary<String> threeBytes = Arbitraries.chars()
                .range('\u0800', '\uffff')
                .filter(c -> !Character.isSurrogate(c))
                .map(String::valueOf);
        Arbitrary<String> supplementary = Arbitraries.integers()
                .between(Character.MIN_SUPPLEMENTARY_CODE_POINT, Character.MAX_CODE_POINT)
                .map(Character::toString);
        Arbitrary<String> loneHigh =
                Arbitraries.chars().range('\ud800', '\udbff').map(String::valueOf);
        Arbitrary<String> loneLow =
                Arbitraries.chars().range('\udc00', '\udfff').map(String::valueOf);
        Arbitrary<String> piece = Arbitraries.frequencyOf(
                Tuple.of(6, ascii),
                Tuple.of(2, twoBytes),
                Tuple.of(2, threeBytes),
                Tuple.of(2, supplementary),
                Tuple.of(1, loneHigh),
                Tuple.of(1, loneLow));
        return Arbitraries.oneOf(
                piece.list().ofMaxSize(40).map(parts -> String.join("", parts)),
                Arbitraries.strings().all().ofMaxLength(40));
    }

    @Provide
    Arbitrary<String> validUnicodeStrings() {
        return unicodeStrings().filter(CodecsTest::isWellFormed);
    }

    private static boolean isWellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    @Property(tries = 1000)
    void utf8MatchesTheJdkByteForByte(
            @ForAll("unicodeStrings") String s,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        byte[] jdk = s.getBytes(StandardCharsets.UTF_8);
        String back = writeCheckAndRead(Codecs.utf8(), s, jdk, offset, slack, nativeMemory);
        assertThat(back).isEqualTo(new String(jdk, StandardCharsets.UTF_8));
    }

    /** The one-pass key encoding (eight chars per store when it can) writes what write() writes. */
    @Property(tries = 1000)
    void keyEncodingMatchesWriteForStrings(@ForAll("unicodeStrings") String s, @ForAll boolean asciiPadded) {
        String key = asciiPadded ? "0123456789abcdef" + s + "ABCDEFGH" : s;
        assertKeyEncodingMatchesWrite(Codecs.utf8(), key);
        if (key.chars().allMatch(c -> c <= 0xFF)) {
            assertKeyEncodingMatchesWrite(Codecs.latin1(), key);
        }
    }

    @Property(tries = 300)
    void keyEncodingMatchesWriteForNumbersAndBytes(
            @ForAll long l, @ForAll int i, @ForAll @Size(max = 40) byte[] bytes) {
        assertKeyEncodingMatchesWrite(Codecs.longs(), l);
        assertKeyEncodingMatchesWrite(Codecs.ints(), i);
        assertKeyEncodingMatchesWrite(Codecs.bytes(), bytes);
        ByteBuffer buffer = ByteBuffer.allocate(bytes.length + 3)
                .position(2)
                .put(bytes)
                .position(2)
                .limit(2 + bytes.length);
        assertKeyEncodingMatchesWrite(Codecs.byteBuffers(), buffer);
        assertThat(buffer.position()).as("the buffer's position is left alone").isEqualTo(2);
        assertKeyEncodingMatchesWrite(Codecs.segments(), MemorySegment.ofArray(bytes));
    }

    @Test
    void latin1KeyEncodingRejectsOtherCharsByName() {
        @SuppressWarnings("unchecked")
        dev.larder.internal.TrustedCodec<String> latin1 = (dev.larder.internal.TrustedCodec<String>) Codecs.latin1();
        assertThatThrownBy(() -> latin1.encodeKey("abcdefghij\u20ac", new byte[64]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+20AC");
        assertThatThrownBy(() -> latin1.encodeKey("ab\u20accdefghijkl", new byte[64]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index 2");
    }

    @SuppressWarnings("unchecked")
    private static <T> void assertKeyEncodingMatchesWrite(Codec<T> codec, T value) {
        dev.larder.internal.TrustedCodec<T> trusted = (dev.larder.internal.TrustedCodec<T>) codec;
        byte[] expected = encode(codec, value);
        byte[] target = new byte[(int) trusted.maxEncodedSize(value) + 8];
        Arrays.fill(target, SENTINEL);
        int n = trusted.encodeKey(value, target);
        assertThat((long) n)
                .as("encoded length")
                .isEqualTo(expected.length)
                .isLessThanOrEqualTo(trusted.maxEncodedSize(value));
        assertThat(Arrays.copyOf(target, n)).isEqualTo(expected);
    }

    @Property(tries = 500)
    void utf8RoundTripsWellFormedStrings(
            @ForAll("validUnicodeStrings") String s, @ForAll @IntRange(max = 9) int offset) {
        byte[] jdk = s.getBytes(StandardCharsets.UTF_8);
        assertThat(writeCheckAndRead(Codecs.utf8(), s, jdk, offset, 4, false)).isEqualTo(s);
    }

    @Property(tries = 500)
    void utf8DecodesArbitraryBytesLikeTheJdk(
            @ForAll @Size(max = 32) byte[] bytes, @ForAll @IntRange(max = 5) int offset) {
        MemorySegment source = MemorySegment.ofArray(new byte[offset + bytes.length + 3]);
        MemorySegment.copy(bytes, 0, source, ValueLayout.JAVA_BYTE, offset, bytes.length);
        assertThat(Codecs.utf8().read(source.asReadOnly(), offset, bytes.length))
                .isEqualTo(new String(bytes, StandardCharsets.UTF_8));
    }

    @Test
    void utf8KnownEncodings() {
        Codec<String> utf8 = Codecs.utf8();
        assertThat(encode(utf8, "")).isEmpty();
        assertThat(encode(utf8, "A\u007f")).isEqualTo(hex("41 7f"));
        assertThat(encode(utf8, "\u0080\u00e9\u07ff")).isEqualTo(hex("c2 80 c3 a9 df bf"));
        assertThat(encode(utf8, "\u0800\u20ac\uffff")).isEqualTo(hex("e0 a0 80 e2 82 ac ef bf bf"));
        assertThat(encode(utf8, "\ud83d\ude00")).isEqualTo(hex("f0 9f 98 80"));
        assertThat(encode(utf8, "\udbff\udfff")).isEqualTo(hex("f4 8f bf bf"));
        // Unpaired surrogates become '?', as String.getBytes does.
        assertThat(encode(utf8, "\ud800")).isEqualTo(hex("3f"));
        assertThat(encode(utf8, "\ud800a")).isEqualTo(hex("3f 61"));
        assertThat(encode(utf8, "\udc00\ud800")).isEqualTo(hex("3f 3f"));
        assertThat(encode(utf8, "\ud800\ud83d\ude00")).isEqualTo(hex("3f f0 9f 98 80"));
        assertThat(encode(utf8, "x\ud83d")).isEqualTo(hex("78 3f"));
    }

    @Test
    void utf8ReadReplacesMalformedInputLikeTheJdk() {
        byte[] malformed = hex("41 c3 28 ed a0 80 f0 9f 98");
        String decoded = Codecs.utf8().read(MemorySegment.ofArray(malformed), 0, malformed.length);
        assertThat(decoded)
                .isEqualTo(new String(malformed, StandardCharsets.UTF_8))
                .contains("\ufffd");
    }

    @Test
    void utf8ThatOnlyFitsExactlyIsWritten() {
        // 6 bytes for 4 chars: below the 3-bytes-per-char bound, so the exact length is measured.
        String s = "abc\u20ac";
        MemorySegment target = sentinelSegment(8);
        Codecs.utf8().write(s, target, 2);
        assertUntouched(target, 0, 2);
        assertThat(target.asSlice(2).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void utf8ThatDoesNotFitWritesNothing() {
        // "abc" alone would fit; the euro sign does not. Nothing at all may be written.
        MemorySegment target = sentinelSegment(5);
        assertThatThrownBy(() -> Codecs.utf8().write("abc\u20ac", target, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertUntouched(target, 0, 5);
    }

    @Test
    void utf8SizeAndWriteDoNotAllocate() {
        AllocationCounter counter = AllocationCounter.create();
        Codec<String> utf8 = Codecs.utf8();
        String[] values = {
            "plain ascii key number one", "caf\u00e9 \u20ac \ud83d\ude00 \ud800 mixed", "\u4e2d\u6587\u5b57\u7b26\u4e32"
        };
        MemorySegment target = MemorySegment.ofArray(new byte[256]);
        int calls = 20_000;
        long best = Long.MAX_VALUE;
        // Early rounds run interpreted; once compiled, encoding must not allocate at all. getBytes
        // would cost at least one array (16+ bytes) per call, far above the threshold.
        for (int round = 0; round < 30 && best > calls; round++) {
            long before = counter.bytes();
            long sum = 0;
            for (int i = 0; i < calls; i++) {
                String v = values[i % values.length];
                sum += utf8.size(v);
                utf8.write(v, target, 3);
            }
            long allocated = counter.bytes() - before;
            best = Math.min(best, allocated);
            assertThat(sum).isPositive();
        }
        assertThat(best).as("bytes allocated by %d size+write calls", calls).isLessThanOrEqualTo(calls);
    }

    // ---------------------------------------------------------------------------------------
    // latin1

    @Property(tries = 500)
    void latin1RoundTripsLatin1Strings(
            @ForAll @CharRange(from = '\u0000', to = '\u00ff') @Size(max = 40) String s,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        byte[] jdk = s.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(writeCheckAndRead(Codecs.latin1(), s, jdk, offset, slack, nativeMemory))
                .isEqualTo(s);
    }

    @Property(tries = 300)
    void latin1RejectsWideCharsBeforeWritingAnything(
            @ForAll @CharRange(from = '\u0000', to = '\u00ff') @Size(max = 20) String prefix,
            @ForAll @CharRange(from = '\u0100', to = '\uffff') char wide,
            @ForAll @Size(max = 20) String suffix) {
        String s = prefix + wide + suffix;
        String expected = String.format("char U+%04X at index %d is not Latin-1", (int) wide, prefix.length());
        MemorySegment target = sentinelSegment(s.length() + 8);
        assertThatThrownBy(() -> Codecs.latin1().size(s))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("latin1 codec")
                .hasMessageContaining(expected);
        assertThatThrownBy(() -> Codecs.latin1().write(s, target, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(expected);
        assertUntouched(target, 0, s.length() + 8);
    }

    @Test
    void latin1MessageNamesCharAndIndex() {
        assertThatThrownBy(() -> Codecs.latin1().write("abc\u20ac", sentinelSegment(8), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("latin1 codec: char U+20AC at index 3 is not Latin-1");
    }

    @Test
    void latin1KnownEncodings() {
        assertThat(encode(Codecs.latin1(), "A\u00e9\u00ff\u0000")).isEqualTo(hex("41 e9 ff 00"));
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        String decoded = Codecs.latin1().read(MemorySegment.ofArray(all), 0, 256);
        assertThat(decoded).isEqualTo(new String(all, StandardCharsets.ISO_8859_1));
        assertThat(encode(Codecs.latin1(), decoded)).isEqualTo(all);
    }

    // ---------------------------------------------------------------------------------------
    // longs and ints

    @Property(tries = 500)
    void longsRoundTrip(
            @ForAll long value,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        byte[] expected = encode(Codecs.longs(), value);
        assertThat(writeCheckAndRead(Codecs.longs(), value, expected, offset, slack, nativeMemory))
                .isEqualTo(value);
    }

    @Property(tries = 1000)
    void longsPreserveOrder(@ForAll long a, @ForAll long b) {
        int bytes = Arrays.compareUnsigned(encode(Codecs.longs(), a), encode(Codecs.longs(), b));
        assertThat(Integer.signum(bytes)).isEqualTo(Integer.signum(Long.compare(a, b)));
    }

    @Property(tries = 500)
    void intsRoundTrip(
            @ForAll int value,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        byte[] expected = encode(Codecs.ints(), value);
        assertThat(writeCheckAndRead(Codecs.ints(), value, expected, offset, slack, nativeMemory))
                .isEqualTo(value);
    }

    @Property(tries = 1000)
    void intsPreserveOrder(@ForAll int a, @ForAll int b) {
        int bytes = Arrays.compareUnsigned(encode(Codecs.ints(), a), encode(Codecs.ints(), b));
        assertThat(Integer.signum(bytes)).isEqualTo(Integer.signum(Integer.compare(a, b)));
    }

    @Test
    void longsAndIntsKnownEncodings() {
        assertThat(encode(Codecs.longs(), 0L)).isEqualTo(hex("80 00 00 00 00 00 00 00"));
        assertThat(encode(Codecs.longs(), 1L)).isEqualTo(hex("80 00 00 00 00 00 00 01"));
        assertThat(encode(Codecs.longs(), -1L)).isEqualTo(hex("7f ff ff ff ff ff ff ff"));
        assertThat(encode(Codecs.longs(), Long.MIN_VALUE)).isEqualTo(hex("00 00 00 00 00 00 00 00"));
        assertThat(encode(Codecs.longs(), Long.MAX_VALUE)).isEqualTo(hex("ff ff ff ff ff ff ff ff"));
        assertThat(encode(Codecs.longs(), 0x0102030405060708L)).isEqualTo(hex("81 02 03 04 05 06 07 08"));
        assertThat(encode(Codecs.ints(), 0)).isEqualTo(hex("80 00 00 00"));
        assertThat(encode(Codecs.ints(), -1)).isEqualTo(hex("7f ff ff ff"));
        assertThat(encode(Codecs.ints(), Integer.MIN_VALUE)).isEqualTo(hex("00 00 00 00"));
        assertThat(encode(Codecs.ints(), 0x01020304)).isEqualTo(hex("81 02 03 04"));
        assertThat(Codecs.longs().size(42L)).isEqualTo(8);
        assertThat(Codecs.ints().size(42)).isEqualTo(4);
    }

    @Test
    void longsAndIntsRejectAWrongLength() {
        MemorySegment source = MemorySegment.ofArray(new byte[16]).asReadOnly();
        assertThatThrownBy(() -> Codecs.longs().read(source, 0, 5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("longs")
                .hasMessageContaining("8")
                .hasMessageContaining("5");
        assertThatThrownBy(() -> Codecs.longs().read(source, 0, 9)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Codecs.ints().read(source, 0, 8))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ints")
                .hasMessageContaining("4")
                .hasMessageContaining("8");
        assertThatThrownBy(() -> Codecs.ints().read(source, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    // ---------------------------------------------------------------------------------------
    // bytes

    @Property(tries = 500)
    void bytesRoundTrip(
            @ForAll @Size(max = 64) byte[] value,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        byte[] copy = value.clone();
        byte[] back = writeCheckAndRead(Codecs.bytes(), value, copy, offset, slack, nativeMemory);
        assertThat(back).isEqualTo(copy).isNotSameAs(value);
        assertThat(value).as("input unchanged").isEqualTo(copy);
    }

    @Test
    void bytesReadReturnsAnIndependentCopy() {
        MemorySegment source = MemorySegment.ofArray(new byte[] {9, 8, 7, 6});
        byte[] read = Codecs.bytes().read(source, 1, 2);
        assertThat(read).containsExactly(8, 7);
        source.set(ValueLayout.JAVA_BYTE, 1, (byte) 0);
        assertThat(read).containsExactly(8, 7);
        assertThat(Codecs.bytes().read(source, 4, 0)).isEmpty();
    }

    // ---------------------------------------------------------------------------------------
    // byteBuffers

    @Property(tries = 500)
    void byteBuffersEncodeTheRemainingBytesWithoutMovingThePosition(
            @ForAll @Size(max = 48) byte[] content,
            @ForAll @IntRange(max = 48) int position,
            @ForAll @IntRange(max = 48) int limit,
            @ForAll boolean direct,
            @ForAll boolean readOnly,
            @ForAll boolean sliced,
            @ForAll @IntRange(max = 9) int offset) {
        ByteBuffer buffer =
                direct ? ByteBuffer.allocateDirect(content.length + 3) : ByteBuffer.allocate(content.length + 3);
        buffer.put(new byte[] {-1, -2, -3}).put(content).flip();
        if (sliced) {
            buffer.position(3);
            buffer = buffer.slice(); // a non-zero array offset for heap buffers
        } else {
            buffer.position(3);
        }
        int base = buffer.position();
        int lim = base + Math.min(limit, content.length);
        int pos = base + Math.min(position, lim - base);
        buffer.limit(lim).position(pos);
        if (readOnly) {
            buffer = buffer.asReadOnlyBuffer();
        }
        byte[] expected = Arrays.copyOfRange(content, pos - base, lim - base);

        ByteBuffer back = writeCheckAndRead(Codecs.byteBuffers(), buffer, expected, offset, 5, direct);

        assertThat(buffer.position()).as("position").isEqualTo(pos);
        assertThat(buffer.limit()).as("limit").isEqualTo(lim);
        assertThat(back.position()).isZero();
        assertThat(back.limit()).isEqualTo(expected.length);
        assertThat(back.isDirect()).isFalse();
        assertThat(back.isReadOnly()).isFalse();
        byte[] backBytes = new byte[back.remaining()];
        back.duplicate().get(backBytes);
        assertThat(backBytes).isEqualTo(expected);
    }

    @Test
    void directByteBufferWorks() {
        ByteBuffer direct = ByteBuffer.allocateDirect(16);
        direct.putLong(0x1122334455667788L).putInt(0x99aabbcc).flip().position(2);
        assertThat(Codecs.byteBuffers().size(direct)).isEqualTo(10);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment target = arena.allocate(12);
            target.fill(SENTINEL);
            Codecs.byteBuffers().write(direct, target, 1);
            assertThat(direct.position()).isEqualTo(2);
            assertThat(direct.remaining()).isEqualTo(10);
            assertThat(target.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(hex("a5 33 44 55 66 77 88 99 aa bb cc a5"));
            ByteBuffer back = Codecs.byteBuffers().read(target.asReadOnly(), 1, 10);
            assertThat(back.position()).isZero();
            assertThat(back.remaining()).isEqualTo(10);
            assertThat(back.getShort(0)).isEqualTo((short) 0x3344);
        }
    }

    @Test
    void byteBufferReadIsIndependentOfTheSource() {
        MemorySegment source = MemorySegment.ofArray(new byte[] {1, 2, 3});
        ByteBuffer read = Codecs.byteBuffers().read(source, 0, 3);
        source.fill((byte) 0);
        assertThat(read.get(0)).isEqualTo((byte) 1);
        assertThat(read.capacity()).isEqualTo(3);
    }

    // ---------------------------------------------------------------------------------------
    // segments

    @Property(tries = 300)
    void segmentsRoundTripAsHeapCopies(
            @ForAll @Size(max = 64) byte[] content,
            @ForAll boolean nativeValue,
            @ForAll @IntRange(max = 17) int offset,
            @ForAll @IntRange(max = 9) int slack,
            @ForAll boolean nativeMemory) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = nativeValue
                    ? arena.allocate(Math.max(1, content.length)).asSlice(0, content.length)
                    : MemorySegment.ofArray(new byte[content.length]);
            MemorySegment.copy(content, 0, value, ValueLayout.JAVA_BYTE, 0, content.length);

            MemorySegment back = writeCheckAndRead(Codecs.segments(), value, content, offset, slack, nativeMemory);

            assertThat(back.isNative()).isFalse();
            assertThat(back.isReadOnly()).isFalse();
            assertThat(back.heapBase()).containsInstanceOf(byte[].class);
            assertThat(back.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(content);
        }
    }

    @Test
    void segmentReadIsACopyNotAView() {
        MemorySegment read;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment source = arena.allocate(8);
            for (int i = 0; i < 8; i++) {
                source.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
            }
            read = Codecs.segments().read(source.asReadOnly(), 2, 4);
            source.fill((byte) 0);
            assertThat(read.toArray(ValueLayout.JAVA_BYTE)).containsExactly(3, 4, 5, 6);
        }
        // Still readable after the arena that held the source is closed.
        assertThat(read.byteSize()).isEqualTo(4);
        assertThat(read.isNative()).isFalse();
        assertThat(read.toArray(ValueLayout.JAVA_BYTE)).containsExactly(3, 4, 5, 6);
    }

    @Test
    void segmentsLargerThanIntMaxAreRejected(@TempDir Path dir) throws Exception {
        long huge = Integer.MAX_VALUE + 10L;
        Path file = dir.resolve("sparse");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(huge); // sparse: no disk or memory is used
        }
        try (Arena arena = Arena.ofConfined();
                FileChannel channel = FileChannel.open(file)) {
            MemorySegment big = channel.map(FileChannel.MapMode.READ_ONLY, 0, huge, arena);
            MemorySegment target = sentinelSegment(16);
            assertThatThrownBy(() -> Codecs.segments().size(big))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(Long.toString(huge));
            assertThatThrownBy(() -> Codecs.segments().write(big, target, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(Long.toString(huge));
            assertUntouched(target, 0, 16);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
