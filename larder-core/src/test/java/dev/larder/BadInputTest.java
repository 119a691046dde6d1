package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.testing.NativeLeakCheck;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad arguments, hostile codecs and use after close. */
class BadInputTest {
    private static final long BUDGET = LarderBuilder.MIN_MAXIMUM_BYTES;

    private NativeLeakCheck leaks;

    @BeforeEach
    void recordNativeMemory() {
        leaks = new NativeLeakCheck();
    }

    @AfterEach
    void closeCachesAndCheckLeaks() {
        leaks.closeAllAndCheck();
    }

    private <K, V> LarderCache<K, V> track(LarderCache<K, V> cache) {
        return leaks.track(cache);
    }

    private LarderCache<String, String> stringCache(long budget) {
        return track(Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8())
                .maximumBytes(budget)
                .build());
    }

    private static Map<String, String> fill(LarderCache<String, String> cache, int n) {
        Map<String, String> written = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            written.put("key" + i, "value-" + i);
        }
        cache.putAll(written);
        return written;
    }

    private static void assertHolds(LarderCache<String, String> cache, Map<String, String> expected) {
        for (Map.Entry<String, String> e : expected.entrySet()) {
            assertThat(cache.getIfPresent(e.getKey()))
                    .as("value of %s", e.getKey())
                    .isEqualTo(e.getValue());
        }
        assertThat(cache.size()).isEqualTo(expected.size());
    }

    // ------------------------------------------------------------------ nulls

    static Stream<Arguments> nullCalls() {
        Map<String, String> nullKey = new HashMap<>();
        nullKey.put(null, "v");
        Map<String, String> nullValue = new HashMap<>();
        nullValue.put("k", null);
        List<String> keysWithNull = Arrays.asList("a", null);
        return Stream.<Map.Entry<String, Consumer<LarderCache<String, String>>>>of(
                        Map.entry("getIfPresent(null)", c -> c.getIfPresent(null)),
                        Map.entry("get(null, loader)", c -> c.get(null, k -> "x")),
                        Map.entry("get(k, null)", c -> c.get("absent", null)),
                        Map.entry("get(present k, null)", c -> c.get("a", null)),
                        Map.entry("read(null, reader)", c -> c.read(null, s -> 1)),
                        Map.entry("read(k, null)", c -> c.read("a", null)),
                        Map.entry("getAll(null)", c -> c.getAll(null)),
                        Map.entry("getAll([a, null])", c -> c.getAll(keysWithNull)),
                        Map.entry("containsKey(null)", c -> c.containsKey(null)),
                        Map.entry("put(null, v)", c -> c.put(null, "v")),
                        Map.entry("put(k, null)", c -> c.put("a", null)),
                        Map.entry("put(null, v, ttl)", c -> c.put(null, "v", Duration.ofSeconds(1))),
                        Map.entry("put(k, null, ttl)", c -> c.put("a", null, Duration.ofSeconds(1))),
                        Map.entry("put(k, v, null)", c -> c.put("a", "v", null)),
                        Map.entry("putAll(null)", c -> c.putAll(null)),
                        Map.entry("putAll({null=v})", c -> c.putAll(nullKey)),
                        Map.entry("putAll({k=null})", c -> c.putAll(nullValue)),
                        Map.entry("getAndPut(null, v)", c -> c.getAndPut(null, "v")),
                        Map.entry("getAndPut(k, null)", c -> c.getAndPut("a", null)),
                        Map.entry("putIfAbsent(null, v)", c -> c.putIfAbsent(null, "v")),
                        Map.entry("putIfAbsent(k, null)", c -> c.putIfAbsent("absent", null)),
                        Map.entry("putIfAbsent(present k, null)", c -> c.putIfAbsent("a", null)),
                        Map.entry("replace(null, v)", c -> c.replace(null, "v")),
                        Map.entry("replace(k, null)", c -> c.replace("a", null)),
                        Map.entry("replace(null, e, v)", c -> c.replace(null, "A", "v")),
                        Map.entry("replace(k, null, v)", c -> c.replace("a", null, "v")),
                        Map.entry("replace(k, e, null)", c -> c.replace("a", "A", null)),
                        Map.entry("remove(null)", c -> c.remove(null)),
                        Map.entry("remove(null, v)", c -> c.remove(null, "A")),
                        Map.entry("remove(k, null)", c -> c.remove("a", null)),
                        Map.entry("getAndRemove(null)", c -> c.getAndRemove(null)),
                        Map.entry("compute(null, f)", c -> c.compute(null, (k, v) -> "x")),
                        Map.entry("compute(k, null)", c -> c.compute("a", null)),
                        Map.entry("computeIfAbsent(null, f)", c -> c.computeIfAbsent(null, k -> "x")),
                        Map.entry("computeIfAbsent(k, null)", c -> c.computeIfAbsent("absent", null)),
                        Map.entry("computeIfPresent(null, f)", c -> c.computeIfPresent(null, (k, v) -> "x")),
                        Map.entry("computeIfPresent(k, null)", c -> c.computeIfPresent("a", null)),
                        Map.entry("merge(null, v, f)", c -> c.merge(null, "v", (a, b) -> a + b)),
                        Map.entry("merge(k, null, f)", c -> c.merge("a", null, (a, b) -> a + b)),
                        Map.entry("merge(k, v, null)", c -> c.merge("a", "v", null)),
                        Map.entry("asMap().get(null)", c -> c.asMap().get(null)),
                        Map.entry("asMap().put(null, v)", c -> c.asMap().put(null, "v")),
                        Map.entry("asMap().put(k, null)", c -> c.asMap().put("a", null)),
                        Map.entry("asMap().putIfAbsent(k, null)", c -> c.asMap().putIfAbsent("absent", null)),
                        Map.entry("asMap().replace(k, null)", c -> c.asMap().replace("a", null)),
                        Map.entry("asMap().replace(k, e, null)", c -> c.asMap().replace("a", "A", null)),
                        Map.entry("asMap().remove(null)", c -> c.asMap().remove(null)))
                .map(e -> Arguments.of(e.getKey(), e.getValue()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nullCalls")
    void nullArgumentsThrowNullPointerExceptionAndChangeNothing(
            String call, Consumer<LarderCache<String, String>> action) {
        LarderCache<String, String> cache = stringCache(1L << 20);
        cache.put("a", "A");
        cache.put("b", "B");
        assertThatNullPointerException().as(call).isThrownBy(() -> action.accept(cache));
        assertThat(cache.getIfPresent("a")).isEqualTo("A");
        assertThat(cache.getIfPresent("b")).isEqualTo("B");
        assertThat(cache.containsKey("absent")).isFalse();
        assertThat(cache.size()).isEqualTo(2);
    }

    @Test
    void builderRejectsNulls() {
        assertThatNullPointerException().isThrownBy(() -> Larder.newBuilder(null, TestCodecs.utf8()));
        assertThatNullPointerException().isThrownBy(() -> Larder.newBuilder(TestCodecs.utf8(), null));
        LarderBuilder<String, String> b = Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8());
        assertThatNullPointerException().isThrownBy(() -> b.ticker(null));
        assertThatNullPointerException().isThrownBy(() -> b.removalListener(null));
        assertThatNullPointerException().isThrownBy(() -> b.expireAfterWrite(null));
        assertThatNullPointerException().isThrownBy(() -> b.expireAfterAccess(null));
        assertThatNullPointerException().isThrownBy(() -> b.maximumBytes(BUDGET).build(null));
    }

    // ------------------------------------------------------------------ builder arguments

    static Stream<Arguments> badBuilderArguments() {
        return Stream.of(
                Arguments.of("maximumBytes", (Consumer<LarderBuilder<String, String>>) b -> b.maximumBytes(0)),
                Arguments.of("maximumBytes", (Consumer<LarderBuilder<String, String>>) b -> b.maximumBytes(-1)),
                Arguments.of("maximumBytes", (Consumer<LarderBuilder<String, String>>) b -> b.maximumBytes(BUDGET - 1)),
                Arguments.of(
                        "maximumBytes", (Consumer<LarderBuilder<String, String>>) b -> b.maximumBytes(Long.MIN_VALUE)),
                Arguments.of("maximumEntries", (Consumer<LarderBuilder<String, String>>) b -> b.maximumEntries(0)),
                Arguments.of("maximumEntries", (Consumer<LarderBuilder<String, String>>) b -> b.maximumEntries(-5)),
                Arguments.of("expectedEntries", (Consumer<LarderBuilder<String, String>>) b -> b.expectedEntries(0)),
                Arguments.of("expectedEntries", (Consumer<LarderBuilder<String, String>>) b -> b.expectedEntries(-1)),
                Arguments.of(
                        "indexMemoryBudget", (Consumer<LarderBuilder<String, String>>) b -> b.indexMemoryBudget(0)),
                Arguments.of(
                        "indexMemoryBudget", (Consumer<LarderBuilder<String, String>>) b -> b.indexMemoryBudget(-1)),
                Arguments.of("expireAfterWrite", (Consumer<LarderBuilder<String, String>>)
                        b -> b.expireAfterWrite(Duration.ZERO)),
                Arguments.of("expireAfterWrite", (Consumer<LarderBuilder<String, String>>)
                        b -> b.expireAfterWrite(Duration.ofSeconds(-1))),
                Arguments.of("expireAfterAccess", (Consumer<LarderBuilder<String, String>>)
                        b -> b.expireAfterAccess(Duration.ZERO)),
                Arguments.of("expireAfterAccess", (Consumer<LarderBuilder<String, String>>)
                        b -> b.expireAfterAccess(Duration.ofNanos(-1))),
                Arguments.of("concurrencyLevel", (Consumer<LarderBuilder<String, String>>) b -> b.concurrencyLevel(0)),
                Arguments.of("concurrencyLevel", (Consumer<LarderBuilder<String, String>>) b -> b.concurrencyLevel(-1)),
                Arguments.of("concurrencyLevel", (Consumer<LarderBuilder<String, String>>)
                        b -> b.concurrencyLevel((1 << 16) + 1)));
    }

    @ParameterizedTest(name = "{0} #{index}")
    @MethodSource("badBuilderArguments")
    void badBuilderArgumentsThrowIllegalArgumentExceptionNamingTheParameter(
            String parameter, Consumer<LarderBuilder<String, String>> setter) {
        LarderBuilder<String, String> b = Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8());
        assertThatIllegalArgumentException().isThrownBy(() -> setter.accept(b)).withMessageContaining(parameter);
    }

    @Test
    void missingMaximumBytesIsAnIllegalState() {
        LarderBuilder<String, String> b = Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8());
        assertThatIllegalStateException().isThrownBy(b::build).withMessageContaining("maximumBytes");
        assertThatIllegalStateException().isThrownBy(() -> b.build(k -> "v")).withMessageContaining("maximumBytes");
        // other settings do not stand in for it
        b.maximumEntries(10).expectedEntries(10);
        assertThatIllegalStateException().isThrownBy(b::build).withMessageContaining("maximumBytes");
    }

    @Test
    void conflictingSettingsAreIllegalState() {
        assertThatIllegalStateException().isThrownBy(() -> Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8())
                .maximumBytes(BUDGET)
                .expireAfterWrite(Duration.ofSeconds(1))
                .expireAfterAccess(Duration.ofSeconds(1))
                .build());
        assertThatIllegalStateException()
                .isThrownBy(() -> Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8())
                        .maximumBytes(1L << 20)
                        .indexMemoryBudget(4096)
                        .build())
                .withMessageContaining("indexMemoryBudget");
    }

    @Test
    void smallestBudgetIsAccepted() {
        LarderCache<String, String> cache = track(Larder.newBuilder(TestCodecs.utf8(), TestCodecs.utf8())
                .maximumBytes(BUDGET)
                .build());
        cache.put("k", "v");
        assertThat(cache.getIfPresent("k")).isEqualTo("v");
        assertThat(cache.memoryMax()).isEqualTo(BUDGET);
        assertThat(cache.memoryUsed()).isBetween(1L, BUDGET);
    }

    // ------------------------------------------------------------------ ttl

    @Test
    void zeroOrNegativeTimeToLiveIsRejectedAndChangesNothing() {
        LarderCache<String, String> cache = stringCache(1L << 20);
        Map<String, String> held = fill(cache, 10);
        assertThatIllegalArgumentException().isThrownBy(() -> cache.put("key3", "new", Duration.ZERO));
        assertThatIllegalArgumentException().isThrownBy(() -> cache.put("key4", "new", Duration.ofMillis(-5)));
        assertThatIllegalArgumentException().isThrownBy(() -> cache.put("fresh", "new", Duration.ofNanos(-1)));
        assertHolds(cache, held);
        assertThat(cache.containsKey("fresh")).isFalse();
    }

    // ------------------------------------------------------------------ too large

    @Test
    void valueLargerThanTheWholeBudgetIsRejectedAndTheCacheKeepsEverything() {
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(TestCodecs.utf8(), TestCodecs.bytes())
                .maximumBytes(BUDGET)
                .build());
        Map<String, byte[]> held = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            byte[] v = new byte[100 + i];
            Arrays.fill(v, (byte) i);
            held.put("key" + i, v);
            cache.put("key" + i, v);
        }
        long sizeBefore = cache.size();
        assertThat(sizeBefore).isEqualTo(20);
        int hugeSize = 100_000;
        byte[] huge = new byte[hugeSize];

        List<ThrowingCallable> writes = List.of(
                () -> cache.put("key3", huge),
                () -> cache.put("new", huge),
                () -> cache.put("key4", huge, Duration.ofMinutes(1)),
                () -> cache.getAndPut("key5", huge),
                () -> cache.putIfAbsent("new", huge),
                () -> cache.replace("key6", huge),
                () -> cache.replace("key7", held.get("key7"), huge),
                () -> cache.compute("key8", (k, v) -> huge),
                () -> cache.computeIfAbsent("new", k -> huge),
                () -> cache.computeIfPresent("key9", (k, v) -> huge),
                () -> cache.merge("key10", huge, (a, b) -> b),
                () -> cache.merge("new", huge, (a, b) -> b),
                () -> cache.putAll(Map.of("new", huge)),
                () -> cache.asMap().put("key11", huge),
                () -> cache.get("new", k -> huge));
        for (int i = 0; i < writes.size(); i++) {
            Throwable thrown = catchThrowable(writes.get(i));
            assertThat(thrown)
                    .as("write #%d of a %d-byte value into a %d-byte cache", i, hugeSize, BUDGET)
                    .isInstanceOf(EntryTooLargeException.class)
                    .isInstanceOf(IllegalArgumentException.class);
            assertMessageNamesSizes(thrown.getMessage(), hugeSize, BUDGET);
            for (Map.Entry<String, byte[]> e : held.entrySet()) {
                assertThat(cache.getIfPresent(e.getKey()))
                        .as("after rejected write #%d: value of %s", i, e.getKey())
                        .isEqualTo(e.getValue());
            }
            assertThat(cache.containsKey("new")).isFalse();
            assertThat(cache.size()).isEqualTo(sizeBefore);
        }
        // a key longer than the engine's key limit is rejected too (IllegalArgumentException)
        String hugeKey = "k".repeat(hugeSize);
        Throwable thrown = catchThrowable(() -> cache.put(hugeKey, new byte[1]));
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(String.valueOf(hugeSize));
        assertThat(cache.size()).isEqualTo(sizeBefore);
        // and the cache keeps working
        cache.put("after", new byte[] {42});
        assertThat(cache.getIfPresent("after")).containsExactly(42);
    }

    private static List<Throwable> causes(Throwable t) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable c = t; c != null && chain.size() < 10; c = c.getCause()) {
            chain.add(c);
        }
        return chain;
    }

    private static Throwable catchThrowable(ThrowingCallable call) {
        try {
            call.call();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** The message must give the entry's size (at least the value's) and the cache's capacity. */
    private static void assertMessageNamesSizes(String message, long entryAtLeast, long budget) {
        assertThat(message).as("EntryTooLargeException message").isNotBlank();
        List<Long> numbers = new ArrayList<>();
        Matcher m = Pattern.compile("\\d[\\d_,]*").matcher(message);
        while (m.find()) {
            numbers.add(Long.parseLong(m.group().replaceAll("[_,]", "")));
        }
        assertThat(numbers)
                .as("numbers in \"%s\": one is the entry size (>= %d)", message, entryAtLeast)
                .anyMatch(n -> n >= entryAtLeast);
        assertThat(numbers)
                .as("numbers in \"%s\": one is the cache's capacity (<= %d)", message, budget)
                .anyMatch(n -> n > 0 && n <= budget);
    }

    // ------------------------------------------------------------------ hostile codecs

    static final class CodecFailure extends RuntimeException {
        CodecFailure(String message) {
            super(message);
        }
    }

    /** UTF-8, except that values starting with "BOOM" throw half way through write(). */
    static final class ExplodingCodec implements Codec<String> {
        @Override
        public int size(String value) {
            return TestCodecs.utf8().size(value);
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            if (value.startsWith("BOOM")) {
                int half = size(value) / 2;
                for (int i = 0; i < half; i++) {
                    target.set(ValueLayout.JAVA_BYTE, offset + i, (byte) 'X');
                }
                throw new CodecFailure("codec failure half way");
            }
            TestCodecs.utf8().write(value, target, offset);
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            return TestCodecs.utf8().read(source, offset, length);
        }
    }

    @Test
    void codecThrowingMidWriteLeavesThePreviousValueIntact() {
        LarderCache<String, String> cache = track(Larder.newBuilder(TestCodecs.utf8(), new ExplodingCodec())
                .maximumBytes(1L << 20)
                .build());
        Map<String, String> held = fill(cache, 50);
        String boom = "BOOM" + "!".repeat(200);
        List<ThrowingCallable> writes = List.of(
                () -> cache.put("key1", boom),
                () -> cache.put("fresh", boom),
                () -> cache.put("key2", boom, Duration.ofMinutes(1)),
                () -> cache.getAndPut("key3", boom),
                () -> cache.putIfAbsent("fresh", boom),
                () -> cache.replace("key4", boom),
                () -> cache.replace("key5", "value-5", boom),
                () -> cache.compute("key6", (k, v) -> boom),
                () -> cache.computeIfPresent("key7", (k, v) -> boom),
                () -> cache.computeIfAbsent("fresh", k -> boom),
                () -> cache.merge("key8", boom, (a, b) -> b),
                () -> cache.asMap().put("key9", boom));
        for (int i = 0; i < writes.size(); i++) {
            Throwable thrown = catchThrowable(writes.get(i));
            assertThat(causes(thrown))
                    .as("write #%d with a codec that fails half way throws the codec's exception (maybe wrapped)", i)
                    .anyMatch(CodecFailure.class::isInstance);
            assertHolds(cache, held);
            assertThat(cache.containsKey("fresh")).isFalse();
        }
        // still works
        cache.put("key1", "fine");
        assertThat(cache.getIfPresent("key1")).isEqualTo("fine");
        cache.put("fresh", "fine too");
        assertThat(cache.getIfPresent("fresh")).isEqualTo("fine too");
    }

    /** Claims fewer bytes than it writes ({@code overrun} > 0) or writes before its offset. */
    static final class LyingCodec implements Codec<String> {
        private final int overrun;
        private final boolean before;

        LyingCodec(int overrun, boolean before) {
            this.overrun = overrun;
            this.before = before;
        }

        @Override
        public int size(String value) {
            return TestCodecs.utf8().size(value);
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            if (value.startsWith("LIE")) {
                if (before) {
                    target.set(ValueLayout.JAVA_BYTE, offset - 1, (byte) 0x7F);
                }
                int n = size(value) + overrun;
                for (int i = 0; i < n; i++) {
                    target.set(ValueLayout.JAVA_BYTE, offset + i, (byte) 0x7F);
                }
                return;
            }
            TestCodecs.utf8().write(value, target, offset);
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            return TestCodecs.utf8().read(source, offset, length);
        }
    }

    @ParameterizedTest(name = "overrun {0} bytes, before offset {1}")
    @MethodSource("lies")
    void codecWritingOutsideItsSizeIsStoppedAndTheCacheKeepsWorking(int overrun, boolean before) {
        LarderCache<String, String> cache = track(Larder.newBuilder(TestCodecs.utf8(), new LyingCodec(overrun, before))
                .maximumBytes(1L << 20)
                .build());
        // neighbours on both sides, written before and after the lie
        Map<String, String> held = fill(cache, 40);
        for (int round = 0; round < 5; round++) {
            String key = "key" + (round * 7);
            assertThatThrownBy(() -> cache.put(key, "LIE" + "-".repeat(30)))
                    .as("a codec writing outside its size")
                    .isInstanceOf(RuntimeException.class);
            String liar = "liar" + round;
            assertThatThrownBy(() -> cache.put(liar, "LIE" + "-".repeat(10))).isInstanceOf(RuntimeException.class);
            assertHolds(cache, held);
            assertThat(cache.containsKey(liar)).isFalse();
        }
        Map<String, String> more = new LinkedHashMap<>(held);
        for (int i = 0; i < 40; i++) {
            more.put("later" + i, "later-value-" + i);
            cache.put("later" + i, "later-value-" + i);
        }
        assertHolds(cache, more);
        for (Iterator<Map.Entry<String, String>> it = cache.entries(); it.hasNext(); ) {
            Map.Entry<String, String> e = it.next();
            assertThat(e.getValue()).isEqualTo(more.get(e.getKey()));
        }
    }

    static Stream<Arguments> lies() {
        return Stream.of(
                Arguments.of(1, false),
                Arguments.of(16, false),
                Arguments.of(4096, false),
                Arguments.of(1 << 20, false),
                Arguments.of(0, true));
    }

    @Test
    void keyCodecWritingPastItsSizeIsStoppedToo() {
        Codec<String> lyingKeys = new LyingCodec(8, false);
        LarderCache<String, String> cache = track(Larder.newBuilder(lyingKeys, TestCodecs.utf8())
                .maximumBytes(1L << 20)
                .build());
        Map<String, String> held = fill(cache, 30);
        assertThatThrownBy(() -> cache.put("LIE-key", "v")).isInstanceOf(RuntimeException.class);
        assertThatThrownBy(() -> cache.getIfPresent("LIE-key")).isInstanceOf(RuntimeException.class);
        assertHolds(cache, held);
        cache.put("ok", "v");
        assertThat(cache.getIfPresent("ok")).isEqualTo("v");
    }

    @Test
    void codecReportingANegativeSizeIsRejected() {
        Codec<String> negative = new Codec<>() {
            @Override
            public int size(String value) {
                return value.equals("neg") ? -1 : TestCodecs.utf8().size(value);
            }

            @Override
            public void write(String value, MemorySegment target, long offset) {
                TestCodecs.utf8().write(value, target, offset);
            }

            @Override
            public String read(MemorySegment source, long offset, int length) {
                return TestCodecs.utf8().read(source, offset, length);
            }
        };
        LarderCache<String, String> cache = track(Larder.newBuilder(TestCodecs.utf8(), negative)
                .maximumBytes(1L << 20)
                .build());
        Map<String, String> held = fill(cache, 10);
        assertThatThrownBy(() -> cache.put("key1", "neg")).isInstanceOf(RuntimeException.class);
        assertHolds(cache, held);
    }

    @Test
    void codecThrowingInReadReachesTheCallerAndTheCacheKeepsWorking() {
        Codec<String> picky = new Codec<>() {
            @Override
            public int size(String value) {
                return TestCodecs.utf8().size(value);
            }

            @Override
            public void write(String value, MemorySegment target, long offset) {
                TestCodecs.utf8().write(value, target, offset);
            }

            @Override
            public String read(MemorySegment source, long offset, int length) {
                String s = TestCodecs.utf8().read(source, offset, length);
                if (s.startsWith("unreadable")) {
                    throw new IllegalArgumentException("not a valid encoding");
                }
                return s;
            }
        };
        LarderCache<String, String> cache = track(Larder.newBuilder(TestCodecs.utf8(), picky)
                .maximumBytes(1L << 20)
                .build());
        Map<String, String> held = fill(cache, 10);
        cache.put("bad", "unreadable!");
        assertThatThrownBy(() -> cache.getIfPresent("bad"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a valid encoding");
        assertThat(cache.size()).isEqualTo(11);
        for (Map.Entry<String, String> e : held.entrySet()) {
            assertThat(cache.getIfPresent(e.getKey())).isEqualTo(e.getValue());
        }
        cache.remove("bad");
        assertThat(cache.containsKey("bad")).isFalse();
    }

    // ------------------------------------------------------------------ after close

    static Stream<Arguments> everyMethod() {
        return Stream.<Map.Entry<String, Consumer<LarderCache<String, String>>>>of(
                        Map.entry("getIfPresent", c -> c.getIfPresent("a")),
                        Map.entry("get(k, loader)", c -> c.get("a", k -> "x")),
                        Map.entry("read", c -> c.read("a", s -> 1)),
                        Map.entry("getAll", c -> c.getAll(List.of("a", "b"))),
                        Map.entry("containsKey", c -> c.containsKey("a")),
                        Map.entry("put", c -> c.put("a", "v")),
                        Map.entry("put(ttl)", c -> c.put("a", "v", Duration.ofSeconds(1))),
                        Map.entry("putAll", c -> c.putAll(Map.of("a", "v"))),
                        Map.entry("getAndPut", c -> c.getAndPut("a", "v")),
                        Map.entry("putIfAbsent", c -> c.putIfAbsent("z", "v")),
                        Map.entry("replace", c -> c.replace("a", "v")),
                        Map.entry("replace(k, e, v)", c -> c.replace("a", "A", "v")),
                        Map.entry("remove", c -> c.remove("a")),
                        Map.entry("remove(k, v)", c -> c.remove("a", "A")),
                        Map.entry("getAndRemove", c -> c.getAndRemove("a")),
                        Map.entry("compute", c -> c.compute("a", (k, v) -> "x")),
                        Map.entry("computeIfAbsent", c -> c.computeIfAbsent("z", k -> "x")),
                        Map.entry("computeIfPresent", c -> c.computeIfPresent("a", (k, v) -> "x")),
                        Map.entry("merge", c -> c.merge("a", "v", (a, b) -> a + b)),
                        Map.entry("clear", LarderCache::clear),
                        Map.entry("size", LarderCache::size),
                        Map.entry("keys", LarderCache::keys),
                        Map.entry("entries", LarderCache::entries),
                        Map.entry("asMap", LarderCache::asMap),
                        Map.entry("stats", LarderCache::stats),
                        Map.entry("cleanUp", LarderCache::cleanUp),
                        Map.entry("memoryUsed", LarderCache::memoryUsed),
                        Map.entry("memoryMax", LarderCache::memoryMax))
                .map(e -> Arguments.of(e.getKey(), e.getValue()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyMethod")
    void everyMethodThrowsIllegalStateAfterClose(String method, Consumer<LarderCache<String, String>> action) {
        LarderCache<String, String> cache = stringCache(1L << 20);
        cache.put("a", "A");
        cache.put("b", "B");
        assertThatCode(() -> action.accept(cache)).as("%s before close", method).doesNotThrowAnyException();
        cache.close();
        assertThat(cache.isClosed()).isTrue();
        assertThatIllegalStateException().as("%s after close", method).isThrownBy(() -> action.accept(cache));
    }

    @Test
    void viewsAndIteratorsObtainedBeforeCloseThrowIllegalStateAfterIt() {
        LarderCache<String, String> cache = stringCache(1L << 20);
        fill(cache, 2000);
        ConcurrentMap<String, String> map = cache.asMap();
        Iterator<String> keys = cache.keys();
        Iterator<Map.Entry<String, String>> entries = cache.entries();
        Iterator<Map.Entry<String, String>> mapEntries = map.entrySet().iterator();
        keys.next();
        entries.next();
        mapEntries.next();
        cache.close();
        assertThatIllegalStateException().isThrownBy(() -> map.get("key1"));
        assertThatIllegalStateException().isThrownBy(() -> map.put("key1", "x"));
        assertThatIllegalStateException().isThrownBy(map::size);
        assertThatIllegalStateException().isThrownBy(() -> map.entrySet().iterator());
        assertThatIllegalStateException().isThrownBy(() -> drain(keys));
        assertThatIllegalStateException().isThrownBy(() -> drain(entries));
        assertThatIllegalStateException().isThrownBy(() -> drain(mapEntries));
    }

    /** Iterates on; must hit IllegalStateException before the iterator says it is done. */
    private static void drain(Iterator<?> it) {
        while (true) {
            if (!it.hasNext()) {
                throw new AssertionError("iterator of a closed cache ran to its end without IllegalStateException");
            }
            it.next();
        }
    }

    @Test
    void closeIsIdempotent() {
        LarderCache<String, String> cache = stringCache(1L << 20);
        fill(cache, 100);
        assertThat(cache.isClosed()).isFalse();
        cache.close();
        assertThat(cache.isClosed()).isTrue();
        assertThatCode(cache::close).doesNotThrowAnyException();
        assertThatCode(cache::close).doesNotThrowAnyException();
        assertThat(cache.isClosed()).isTrue();
        assertThat(leaks.held()).isZero();
    }
}
