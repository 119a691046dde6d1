package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The deadline heap against {@link PriorityQueue}, with ticker values that may wrap around. */
class PageExpiryQueueTest {

    /** {@code poll} when {@code add} is false; deadlines are offsets from the property's base. */
    record Step(boolean add, long offset, int page) {}

    record Item(long deadline, int page) {}

    /** Ticker order: by the sign of the difference, valid within a window under 2^63 wide. */
    private static final Comparator<Long> TICKER_ORDER = (a, b) -> Long.signum(a - b);

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Long> offsets = Arbitraries.oneOf(
                Arbitraries.longs().between(0, 20), // many ties
                Arbitraries.longs().between(0, 1L << 62));
        Arbitrary<Step> step = Combinators.combine(
                        Arbitraries.frequency(net.jqwik.api.Tuple.of(3, true), net.jqwik.api.Tuple.of(2, false)),
                        offsets,
                        Arbitraries.integers().between(0, 50))
                .as(Step::new);
        return step.list().ofMaxSize(300);
    }

    @Provide
    Arbitrary<Long> bases() {
        return Arbitraries.oneOf(
                Arbitraries.of(0L, Long.MAX_VALUE - 100, Long.MIN_VALUE, -(1L << 61)), Arbitraries.longs());
    }

    @Property(tries = 500)
    void behavesLikeAPriorityQueue(@ForAll("steps") List<Step> steps, @ForAll("bases") long base) {
        PageExpiryQueue queue = new PageExpiryQueue();
        PriorityQueue<Item> model = new PriorityQueue<>(
                Comparator.comparing(Item::deadline, TICKER_ORDER).thenComparing(Item::page));
        for (Step s : steps) {
            if (s.add()) {
                long deadline = base + s.offset(); // may wrap past Long.MAX_VALUE
                queue.add(deadline, s.page());
                model.add(new Item(deadline, s.page()));
            } else if (!model.isEmpty()) {
                pollAndCompare(queue, model);
            }
            assertThat(queue.isEmpty()).isEqualTo(model.isEmpty());
            if (!model.isEmpty()) {
                assertThat(queue.peekDeadline()).isEqualTo(model.peek().deadline());
            }
        }
        while (!model.isEmpty()) {
            pollAndCompare(queue, model);
        }
        assertThat(queue.isEmpty()).isTrue();
    }

    private static void pollAndCompare(PageExpiryQueue queue, PriorityQueue<Item> model) {
        long deadline = queue.peekDeadline();
        assertThat(deadline).isEqualTo(model.peek().deadline());
        int page = queue.poll();
        // Among equal deadlines any page may come first, but it must be one that was added.
        assertThat(model.remove(new Item(deadline, page)))
                .as("(%d, %d) was in the queue", deadline, page)
                .isTrue();
    }

    @Test
    void growsPastItsInitialCapacityAndPollsInOrder() {
        PageExpiryQueue queue = new PageExpiryQueue();
        for (int i = 999; i >= 0; i--) {
            queue.add(i * 10L, i);
        }
        for (int i = 0; i < 1000; i++) {
            assertThat(queue.peekDeadline()).isEqualTo(i * 10L);
            assertThat(queue.poll()).isEqualTo(i);
        }
        assertThat(queue.isEmpty()).isTrue();
    }
}
