package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Unit tests of the log of pages: reservations, rolling and sealing, the FIFO, recycling, deadlines. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PageStoreTest {

    private static final int PAGE = 4096;

    /** One reservation: where, how big, and the key that marks its bytes. */
    record Reserved(long location, int size, int keyLength, int valueLength, boolean expires, byte mark) {}

    private static final MemorySegment[] FILLED = new MemorySegment[256];

    /** A page's worth of {@code b}. */
    private static synchronized MemorySegment filled(int b) {
        int i = b & 0xFF;
        if (FILLED[i] == null) {
            byte[] bytes = new byte[PAGE];
            java.util.Arrays.fill(bytes, (byte) b);
            FILLED[i] = MemorySegment.ofArray(bytes);
        }
        return FILLED[i];
    }

    /** Reserves and writes a record whose key and value bytes are all {@code mark}. */
    private static Reserved reserveAndWrite(
            PageStore store, int stripe, int keyLength, int valueLength, boolean expires, byte mark) {
        int format = store.shapes().formatFor(keyLength, valueLength, false); // as the cache does
        long location = store.reserve(stripe, format, keyLength, valueLength, expires, false);
        if (location == PageStore.NO_PAGE) {
            return null;
        }
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        int size = RecordLayout.recordSize(offset, format, keyLength, valueLength, expires, false);
        assertThat(offset + size).as("record inside its page").isLessThanOrEqualTo(store.pageSize());
        // The reserved bytes were zero: nobody else was given them.
        long dirty =
                MemorySegment.mismatch(page, offset, offset + size, MemorySegment.ofArray(new byte[size]), 0, size);
        if (dirty >= 0) {
            throw new AssertionError(
                    "reserved byte " + (offset + dirty) + " of location " + location + " was not zero");
        }
        long keyAt = RecordLayout.writeHeader(page, offset, format, keyLength, valueLength, false, expires, false, 99);
        page.asSlice(keyAt, keyLength + valueLength).fill(mark);
        RecordLayout.markDecided(page, offset);
        return new Reserved(location, size, keyLength, valueLength, expires, mark);
    }

    /**
     * Empties every stripe's FIFO, walking each page from offset 0 to its limit, and checks the
     * records found are exactly the reservations, back to back, with their bytes intact. Returns
     * the pages stripe by stripe, each stripe's in FIFO order.
     */
    private static List<Integer> drainLogAndCheckItHoldsExactly(PageStore store, List<Reserved> all) {
        Map<Long, Reserved> byLocation = new HashMap<>();
        for (Reserved r : all) {
            assertThat(byLocation.put(r.location(), r))
                    .as("location given twice")
                    .isNull();
        }
        Set<Long> walked = new HashSet<>();
        List<Integer> order = new ArrayList<>();
        RecordLayout.Header h = new RecordLayout.Header();
        for (int stripe = 0; stripe < store.stripes(); stripe++)
            while (store.oldestPage(stripe) >= 0) {
                int page = store.oldestPage(stripe);
                order.add(page);
                long limit = store.limit(page);
                assertThat(limit).isBetween(0L, (long) PAGE);
                MemorySegment segment = store.pageById(page);
                long at = 0;
                while (at < limit) {
                    h.parse(segment, at, limit, store.shapes());
                    long location = store.location(page, at);
                    Reserved r = byLocation.get(location);
                    assertThat(r)
                            .as("record at %d of page %d was reserved", at, page)
                            .isNotNull();
                    assertThat(h.end - at).isEqualTo(r.size());
                    assertThat(h.keyLength).isEqualTo(r.keyLength());
                    assertThat(h.valueLength).isEqualTo(r.valueLength());
                    long wrong = MemorySegment.mismatch(
                            segment, h.keyOffset, h.end, filled(r.mark()), 0, h.end - h.keyOffset);
                    if (wrong >= 0) {
                        throw new AssertionError(
                                "byte " + (h.keyOffset + wrong) + " of the record at " + location + " overwritten");
                    }
                    walked.add(location);
                    at = h.end;
                }
                assertThat(at)
                        .as("records end exactly at the limit of page %d", page)
                        .isEqualTo(limit);
                // Past the limit the page is untouched.
                long written = MemorySegment.mismatch(segment, limit, PAGE, filled(0), 0, PAGE - limit);
                if (written >= 0) {
                    throw new AssertionError(
                            "byte " + (limit + written) + " of page " + page + " past its limit " + limit + " written");
                }
                store.dequeueOldest(stripe);
            }
        assertThat(store.pagesInLog()).isZero();
        assertThat(walked)
                .as("every reservation lies below its page's final limit")
                .isEqualTo(byLocation.keySet());
        return order;
    }

    @Test
    void concurrentReservationsNeverOverlapAndNoneIsLostToSealing() throws Exception {
        concurrentReservations(3, 4, 3000, false, true);
    }

    /**
     * Small records and records of half a page or more, all on one stripe: the big ones roll the
     * page while the small ones still fit in it, so sealing races with successful reservations.
     */
    @Test
    void reservationsRacingARollOnOneStripeAreNeverLost() throws Exception {
        concurrentReservations(1, 4, 6000, true, false);
    }

    private static void concurrentReservations(
            int stripes, int threads, int perThread, boolean rollingMix, boolean withSealer) throws Exception {
        MemoryBudget budget = new MemoryBudget(64L << 20);
        PageStore store = new PageStore(PAGE, 64L << 20, stripes, budget);
        AtomicIntegerArray activePage = new AtomicIntegerArray(stripes + 1);
        for (int s = 0; s <= stripes; s++) {
            activePage.set(s, -1);
        }
        AtomicBoolean writersDone = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<List<Reserved>> results = new ArrayList<>();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<Reserved> mine = new ArrayList<>();
            results.add(mine);
            int id = t;
            workers.add(new Thread(() -> {
                SplittableRandom random = new SplittableRandom(id * 7919L);
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        int stripe;
                        int keyLength;
                        int valueLength;
                        if (rollingMix) {
                            stripe = 0;
                            boolean big = random.nextInt(3) == 0;
                            keyLength = 1 + random.nextInt(8);
                            valueLength = big ? 1500 + random.nextInt(1500) : random.nextInt(8);
                        } else {
                            // Several threads per stripe (they share the CAS), the evictor's too.
                            stripe = random.nextInt(stripes + 1);
                            keyLength = 1 + random.nextInt(random.nextBoolean() ? 16 : 300);
                            valueLength = random.nextInt(random.nextBoolean() ? 64 : 600);
                        }
                        byte mark = (byte) (1 + random.nextInt(255));
                        Reserved r = reserveAndWrite(store, stripe, keyLength, valueLength, random.nextBoolean(), mark);
                        assertThat(r).as("page store ran out of pages").isNotNull();
                        activePage.set(stripe, (int) (r.location() / PAGE));
                        mine.add(r);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        // The evictor's habit: seal the active pages under the writers' feet.
        Thread sealer = new Thread(() -> {
            SplittableRandom random = new SplittableRandom(1);
            try {
                start.await();
                while (!writersDone.get()) {
                    int page = activePage.get(random.nextInt(stripes + 1));
                    if (page >= 0) {
                        store.sealActive(page);
                        long limit = store.limit(page);
                        assertThat(limit).isBetween(-1L, (long) PAGE);
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        });
        workers.forEach(Thread::start);
        if (withSealer) {
            sealer.start();
        } else {
            start.await();
        }
        for (Thread w : workers) {
            w.join(30_000);
        }
        writersDone.set(true);
        if (withSealer) {
            sealer.join(30_000);
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }

        List<Reserved> all = new ArrayList<>();
        results.forEach(all::addAll);
        assertThat(all).hasSize(threads * perThread);

        // No two reservations overlap, within a page or across pages.
        TreeMap<Long, Reserved> sorted = new TreeMap<>();
        all.forEach(r -> sorted.put(r.location(), r));
        long previousEnd = -1;
        for (Reserved r : sorted.values()) {
            assertThat(r.location()).isGreaterThanOrEqualTo(previousEnd);
            assertThat(r.location() / PAGE).isEqualTo((r.location() + r.size() - 1) / PAGE);
            previousEnd = r.location() + r.size();
        }

        // Some pages are still active; seal them all, then walk the log.
        for (int s = 0; s <= stripes; s++) {
            if (activePage.get(s) >= 0) {
                store.sealActive(activePage.get(s));
            }
        }
        List<Integer> pages = drainLogAndCheckItHoldsExactly(store, all);
        for (int page : pages) {
            assertThat(store.isSealed(page)).isTrue();
        }
        assertThat(store.allocatedBytes()).isEqualTo((long) pages.size() * PAGE);
        assertThat(budget.used()).isEqualTo(store.allocatedBytes());
        store.freeAll();
        assertThat(budget.used()).isZero();
    }

    /**
     * {@link PageStore#nextQueued} against the FIFOs themselves ({@link PageStore#oldestPage}):
     * over 64 stripes (two words of bits), with pages entering and leaving FIFOs at random, each
     * answer is the first stripe of the range whose FIFO holds a page.
     */
    @Test
    void nextQueuedFindsTheFirstStripeWhoseFifoHoldsAPage() {
        int writerStripes = 70;
        MemoryBudget budget = new MemoryBudget(64L << 20);
        PageStore store = new PageStore(PAGE, 64L << 20, writerStripes, budget);
        int stripes = store.stripes();
        assertThat(store.nextQueued(0, stripes)).isEqualTo(-1);
        SplittableRandom random = new SplittableRandom(11);
        for (int step = 0; step < 3000; step++) {
            int stripe = random.nextInt(writerStripes);
            if (random.nextInt(3) > 0) {
                // A reservation past its page's room rolls the stripe onto a fresh page: one more in its FIFO.
                assertThat(reserveAndWrite(store, stripe, 10, 1000, false, (byte) 5))
                        .isNotNull();
            } else if (store.oldestPage(stripe) >= 0 && store.isSealed(store.oldestPage(stripe))) {
                store.dequeueOldest(stripe); // as the evictor's cursor does past a sealed page's end
            }
            int from = random.nextInt(stripes + 1);
            int to = from + random.nextInt(stripes + 1 - from);
            int expected = -1;
            for (int s = from; s < to && expected < 0; s++) {
                expected = store.oldestPage(s) >= 0 ? s : -1;
            }
            assertThat(store.nextQueued(from, to))
                    .as("first queued stripe in [%d, %d)", from, to)
                    .isEqualTo(expected);
        }
        store.freeAll();
    }

    @Test
    void pagesRollAndEnterTheFifoInActivationOrder() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 2, budget);
        assertThat(store.writerStripes()).isEqualTo(2);
        assertThat(store.evictorStripe(PageStore.WINDOW)).isEqualTo(2);
        assertThat(store.oldestPage(0)).isEqualTo(-1);

        List<Integer> activations = new ArrayList<>();
        Map<Integer, List<Integer>> activationsByStripe = new java.util.TreeMap<>();
        List<Reserved> all = new ArrayList<>();
        int[] lastPage = {-1, -1, -1};
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 2000; i++) {
            int stripe = random.nextInt(3);
            Reserved r = reserveAndWrite(store, stripe, 10, random.nextInt(200), random.nextBoolean(), (byte) 7);
            assertThat(r).isNotNull();
            all.add(r);
            int page = (int) (r.location() / PAGE);
            if (page != lastPage[stripe]) {
                if (lastPage[stripe] >= 0) {
                    // The stripe rolled: the page it left is sealed, where its records end.
                    int old = lastPage[stripe];
                    assertThat(store.isSealed(old)).isTrue();
                    Reserved lastOfOld = all.stream()
                            .filter(x -> x.location() / PAGE == old)
                            .reduce((a, b) -> b)
                            .orElseThrow();
                    assertThat(store.sealedTop(old)).isEqualTo(lastOfOld.location() % PAGE + lastOfOld.size());
                    assertThat(store.limit(old)).isEqualTo(store.sealedTop(old));
                }
                assertThat(activations).doesNotContain(page);
                activations.add(page);
                activationsByStripe
                        .computeIfAbsent(stripe, x -> new ArrayList<>())
                        .add(page);
                lastPage[stripe] = page;
            }
            // The active page's limit is the stripe's cursor: just past this record.
            assertThat(store.isSealed(page)).isFalse();
            assertThat(store.limit(page)).isEqualTo(r.location() % PAGE + r.size());
        }
        assertThat(activations.size()).isGreaterThan(20);
        assertThat(store.pagesInLog()).isEqualTo(activations.size());
        assertThat(store.allocatedBytes()).isEqualTo((long) activations.size() * PAGE);
        assertThat(drainLogAndCheckItHoldsExactly(store, all))
                .as("each stripe's FIFO holds its pages in activation order")
                .isEqualTo(activationsByStripe.values().stream()
                        .flatMap(List::stream)
                        .toList());
        assertThat(store.oldestPage(0)).isEqualTo(-1);
        store.freeAll();
    }

    @Test
    void aRecordOfAWholePageFits() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int keyLength = 100;
        int valueLength = PAGE - (1 + 1 + 2 + keyLength); // layout, key length, value length (2 bytes), key
        assertThat(RecordLayout.recordSize(0, RecordLayout.FORMAT_VARINT, keyLength, valueLength, false, false))
                .isEqualTo(PAGE);
        // Two other shapes learned first, so the whole-page record has its lengths.
        int shapedValue = PAGE - 2; // layout byte, key: a record of a learned shape stores no lengths
        store.shapes().formatFor(1, shapedValue, false);
        Reserved small = reserveAndWrite(store, 0, 1, 0, false, (byte) 1);
        Reserved whole = reserveAndWrite(store, 0, keyLength, valueLength, false, (byte) 2);
        assertThat(whole.size()).isEqualTo(PAGE);
        assertThat(store.offset(whole.location())).isZero();
        assertThat(whole.location() / PAGE).isNotEqualTo(small.location() / PAGE);
        assertThat(store.sealedTop((int) (small.location() / PAGE))).isEqualTo(small.size());
        assertThat(store.limit((int) (whole.location() / PAGE))).isEqualTo(PAGE);
        Reserved shaped = reserveAndWrite(store, 0, 1, shapedValue, false, (byte) 3);
        assertThat(shaped.size()).isEqualTo(PAGE);
        assertThat(store.offset(shaped.location())).isZero();
        store.freeAll();
    }

    @Test
    void reserveOnPageNeverAllocatesAPage() {
        MemoryBudget budget = new MemoryBudget(8 * PAGE);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int format = RecordLayout.FORMAT_VARINT;
        int value = 1000; // four records per page
        // No page yet: nothing to reserve on, and none is taken.
        assertThat(store.reserveOnPage(0, format, 10, value, false, false)).isEqualTo(PageStore.NO_PAGE);
        assertThat(budget.used()).isZero();

        Reserved first = reserveAndWrite(store, 0, 10, value, false, (byte) 1); // takes a page
        long page = first.location() / PAGE;
        long top = first.size();
        int onPage = 1;
        for (; ; ) {
            long location = store.reserveOnPage(0, format, 10, value, false, false);
            if (location == PageStore.NO_PAGE) {
                break;
            }
            assertThat(location / PAGE).as("on the stripe's page").isEqualTo(page);
            assertThat(store.offset(location)).as("right after the last record").isEqualTo(top);
            top += RecordLayout.recordSize(top, format, 10, value, false, false);
            onPage++;
        }
        assertThat(onPage).isEqualTo(4);
        assertThat(top + RecordLayout.recordSize(top, format, 10, value, false, false))
                .as("the page had no room left")
                .isGreaterThan(PAGE);
        assertThat(budget.used()).as("no second page").isEqualTo(PAGE);
        assertThat(store.isSealed((int) page)).isFalse();

        // reserve rolls to a newly allocated page where reserveOnPage gave up.
        Reserved next = reserveAndWrite(store, 0, 10, value, false, (byte) 2);
        assertThat(next.location() / PAGE).isNotEqualTo(page);
        assertThat(store.isSealed((int) page)).isTrue();
        store.freeAll();
        assertThat(budget.used()).isZero();
    }

    @Test
    void reserveOnPageRollsOntoAPooledPageButLeavesTheWritersReserve() {
        MemoryBudget budget = new MemoryBudget(4 * PAGE);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int format = RecordLayout.FORMAT_VARINT;
        int value = PAGE - 50; // one record per page
        List<Integer> pages = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            pages.add(
                    (int) (reserveAndWrite(store, 0, 10, value, false, (byte) 1).location() / PAGE));
        }
        int active = pages.get(2);
        // One free page is the writers' reserve (the evictor's): reserveOnPage leaves it, and the
        // full active page stays active.
        store.dequeueOldest(0);
        store.recycle(pages.get(0));
        assertThat(store.reserveOnPage(0, format, 10, value, false, false)).isEqualTo(PageStore.NO_PAGE);
        assertThat(store.isSealed(active)).as("left active").isFalse();
        assertThat(store.freePageCount()).isEqualTo(1);

        // A second free page: reserveOnPage seals the full page and appends to a pooled one.
        store.dequeueOldest(0);
        store.recycle(pages.get(1));
        long used = budget.used();
        long location = store.reserveOnPage(0, format, 10, value, false, false);
        assertThat(location).isNotEqualTo(PageStore.NO_PAGE);
        assertThat(List.of(pages.get(0), pages.get(1))).contains((int) (location / PAGE));
        assertThat(store.offset(location)).as("at the fresh page's start").isZero();
        assertThat(store.isSealed(active)).isTrue();
        assertThat(store.freePageCount()).isEqualTo(1);
        assertThat(budget.used()).as("nothing allocated").isEqualTo(used);
        RecordLayout.markDecided(store.page(location), store.offset(location));
        store.freeAll();
        assertThat(budget.used()).isZero();
    }

    @Test
    void reserveReturnsNoPageWhenTheBudgetIsSpentAndTheEvictorKeepsItsReserve() {
        MemoryBudget budget = new MemoryBudget(3 * PAGE);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int writer = 0;
        int evictor = store.evictorStripe(PageStore.WINDOW);
        int value = PAGE - 50; // one record per page
        List<Integer> pages = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Reserved r = reserveAndWrite(store, writer, 10, value, false, (byte) 1);
            assertThat(r).isNotNull();
            pages.add((int) (r.location() / PAGE));
        }
        assertThat(store.writerCanTakePage()).isFalse();
        assertThat(store.reserve(writer, RecordLayout.FORMAT_VARINT, 10, value, false, false))
                .isEqualTo(PageStore.NO_PAGE);
        assertThat(store.reserve(evictor, RecordLayout.FORMAT_VARINT, 10, value, false, false))
                .isEqualTo(PageStore.NO_PAGE);
        assertThat(budget.used()).isEqualTo(3L * PAGE);

        // Recycle the two oldest (sealed) pages: one is the evictor's reserve.
        for (int i = 0; i < 2; i++) {
            assertThat(store.oldestPage(0)).isEqualTo(pages.get(i));
            assertThat(store.isSealed(pages.get(i))).isTrue();
            store.dequeueOldest(0);
            store.recycle(pages.get(i));
        }
        assertThat(store.freePageCount()).isEqualTo(2);
        assertThat(store.writerCanTakePage()).isTrue();
        Reserved w = reserveAndWrite(store, writer, 10, value, false, (byte) 2);
        assertThat(w).isNotNull();
        assertThat(store.freePageCount()).isEqualTo(1);
        assertThat(store.writerCanTakePage()).isFalse();
        assertThat(store.reserve(writer, RecordLayout.FORMAT_VARINT, 10, value, false, false))
                .isEqualTo(PageStore.NO_PAGE);
        Reserved e = reserveAndWrite(store, evictor, 10, value, false, (byte) 3);
        assertThat(e).as("the evictor takes the last free page").isNotNull();
        assertThat(store.freePageCount()).isZero();
        assertThat(Set.of(w.location() / PAGE, e.location() / PAGE))
                .containsExactlyInAnyOrder((long) pages.get(0), (long) pages.get(1));
        assertThat(budget.used()).isEqualTo(3L * PAGE);
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThatThrownBy(() -> store.reserve(evictor, RecordLayout.FORMAT_VARINT, 1000, 3000, false, false))
                .isInstanceOf(IllegalStateException.class);
    }

    /**
     * A page that comes back from the pool reads zero but for what is written on it again: a
     * small page is zeroed by whoever takes it, a larger one when it is recycled.
     */
    @ParameterizedTest
    @ValueSource(ints = {PAGE, 64 * 1024})
    void aRecycledPageIsZeroWhenTakenAgain(int pageSize) {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(pageSize, 1 << 20, 1, budget);
        int big = pageSize - 1000; // one record fills the page: the next one rolls
        Reserved first = reserveAndWrite(store, 0, 40, big, true, (byte) 0x5A);
        Reserved second = reserveAndWrite(store, 0, 40, big, true, (byte) 0x5B); // rolls
        int page = (int) (first.location() / pageSize);
        assertThat(second.location() / pageSize).isNotEqualTo(page);
        MemorySegment segment = store.pageById(page);
        assertThat(segment.get(ValueLayout.JAVA_BYTE, 0)).isNotZero();
        store.dequeueOldest(0);
        store.recycle(page);
        if (pageSize > PageStore.ZERO_ON_TAKE_MAX_PAGE) {
            assertThat(segment.asSlice(0, pageSize).mismatch(MemorySegment.ofArray(new byte[pageSize])))
                    .as("zeroed when recycled")
                    .isEqualTo(-1);
        }
        // The evictor's stripe takes it back (writers leave one page in reserve).
        Reserved again = reserveAndWrite(store, store.evictorStripe(PageStore.WINDOW), 1, 1, false, (byte) 1);
        assertThat(again.location()).isEqualTo(store.location(page, 0));
        for (long i = again.size(); i < pageSize; i++) {
            assertThat(segment.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isZero();
        }
        assertThat(store.isSealed(page)).isFalse();
        assertThat(store.minDeadline(page)).isEqualTo(Long.MAX_VALUE);
        store.freeAll();
    }

    @Test
    void releaseFreePagesReturnsBudget() {
        long nativeBefore = NativeMemory.outstandingBytes();
        MemoryBudget budget = new MemoryBudget(10L * PAGE);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        List<Integer> pages = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            pages.add((int)
                    (reserveAndWrite(store, 0, 10, PAGE - 50, false, (byte) 1).location() / PAGE));
        }
        assertThat(budget.used()).isEqualTo(6L * PAGE);
        assertThat(store.allocatedBytes()).isEqualTo(6L * PAGE);
        for (int i = 0; i < 5; i++) {
            store.dequeueOldest(0);
            store.recycle(pages.get(i));
        }
        assertThat(store.freePageCount()).isEqualTo(5);
        assertThat(budget.used()).as("pooled pages keep their budget").isEqualTo(6L * PAGE);

        // Enough already available: nothing is freed.
        assertThat(store.releaseFreePages(4L * PAGE)).isTrue();
        assertThat(store.freePageCount()).isEqualTo(5);
        // Two more pages' worth: exactly two freed.
        assertThat(store.releaseFreePages(6L * PAGE)).isTrue();
        assertThat(store.freePageCount()).isEqualTo(3);
        assertThat(budget.used()).isEqualTo(4L * PAGE);
        assertThat(store.allocatedBytes()).isEqualTo(4L * PAGE);
        // More than the pool can give: all freed, and false.
        assertThat(store.releaseFreePages(10L * PAGE)).isFalse();
        assertThat(store.freePageCount()).isZero();
        assertThat(budget.used()).isEqualTo(PAGE);
        assertThat(store.allocatedBytes()).isEqualTo(PAGE);
        assertThat(NativeMemory.outstandingBytes() - nativeBefore)
                .as("native memory freed")
                .isEqualTo(PAGE);
        // The freed ids are reused for fresh, zeroed pages.
        for (int i = 0; i < 9; i++) {
            Reserved r = reserveAndWrite(store, 0, 10, PAGE - 50, false, (byte) 2);
            assertThat(r).isNotNull();
            assertThat(r.location() / PAGE).isLessThan(10);
        }
        assertThat(budget.used()).isEqualTo(10L * PAGE);
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(nativeBefore);
    }

    @Test
    void pagesOfALargeAdvisedLogAreCarvedFromSlabsAndGivenBackWithThem() {
        org.junit.jupiter.api.Assumptions.assumeTrue(HugePageMapping.supported(), "Linux on x86-64 or aarch64");
        long nativeBefore = NativeMemory.outstandingBytes();
        long bytes = PageSlabs.MIN_SLABS * NativeMemory.HUGE_PAGE;
        assertThat(new PageStore(PAGE, bytes, 1, new MemoryBudget(bytes), false).carvesSlabs())
                .as("not advised")
                .isFalse();
        assertThat(new PageStore(PAGE, bytes / 2, 1, new MemoryBudget(bytes), true).carvesSlabs())
                .as("a log of fewer slabs than the minimum")
                .isFalse();
        MemoryBudget budget = new MemoryBudget(bytes);
        PageStore store = new PageStore(PAGE, bytes, 1, budget, true);
        assertThat(store.carvesSlabs()).isTrue();
        int perSlab = (int) (NativeMemory.HUGE_PAGE / PAGE);
        List<Integer> pages = new ArrayList<>();
        for (int i = 0; i < perSlab + 2; i++) {
            pages.add((int)
                    (reserveAndWrite(store, 0, 10, PAGE - 50, false, (byte) 1).location() / PAGE));
        }
        assertThat(store.mappedSlabs()).isEqualTo(2);
        assertThat(NativeMemory.outstandingBytes() - nativeBefore).isEqualTo(2 * NativeMemory.HUGE_PAGE);
        assertThat(budget.used()).as("pages are budgeted one by one").isEqualTo((perSlab + 2L) * PAGE);
        for (int i = 0; i <= perSlab; i++) {
            store.dequeueOldest(0);
            store.recycle(pages.get(i));
        }
        assertThat(store.releaseFreePages(bytes)).isFalse(); // every pooled page freed, still short
        assertThat(budget.used()).isEqualTo(PAGE);
        assertThat(store.mappedSlabs())
                .as("the slab whose pages are all free is unmapped")
                .isEqualTo(1);
        assertThat(NativeMemory.outstandingBytes() - nativeBefore).isEqualTo(NativeMemory.HUGE_PAGE);
        // Pages taken again read as zero (reserveAndWrite checks), the discarded one included.
        for (int i = 0; i < perSlab + 4; i++) {
            assertThat(reserveAndWrite(store, 0, 10, PAGE - 50, false, (byte) 3))
                    .isNotNull();
        }
        store.freeAll();
        assertThat(budget.used()).isZero();
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(nativeBefore);
    }

    // ---------------------------------------------------------------------------------------
    // Page deadlines

    @Test
    void minDeadlineKeepsTheEarliestAndPollReturnsDuePages() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 2, budget);
        long base = Long.MAX_VALUE - 1000; // ticker values near the wrap
        Reserved a = reserveAndWrite(store, 0, 4, 4, true, (byte) 1);
        Reserved b = reserveAndWrite(store, 1, 4, 4, true, (byte) 1);
        int pa = (int) (a.location() / PAGE);
        int pb = (int) (b.location() / PAGE);
        assertThat(pa).isNotEqualTo(pb);
        assertThat(store.minDeadline(pa)).isEqualTo(Long.MAX_VALUE);
        assertThat(store.pollExpiringPage(base)).isEqualTo(-1);

        store.noteDeadline(a.location(), base + 500);
        store.noteDeadline(a.location(), base + 900); // later: ignored
        assertThat(store.minDeadline(pa)).isEqualTo(base + 500);
        store.noteDeadline(a.location() + 20, base + 300); // same page, earlier
        assertThat(store.minDeadline(pa)).isEqualTo(base + 300);
        store.noteDeadline(b.location(), base + 2000); // past Long.MAX_VALUE: wraps to negative
        assertThat(store.minDeadline(pb)).isEqualTo(base + 2000).isNegative();

        assertThat(store.pollExpiringPage(base + 300))
                .as("not due at its deadline")
                .isEqualTo(-1);
        assertThat(store.pollExpiringPage(base + 301)).isEqualTo(pa);
        assertThat(store.pollExpiringPage(base + 301)).isEqualTo(-1);

        // The evictor removed the expired records; the ones left expire at base + 800.
        store.resetMinDeadline(pa, base + 300, base + 800);
        assertThat(store.minDeadline(pa)).isEqualTo(base + 800);
        assertThat(store.pollExpiringPage(base + 700))
                .as("stale entry at base + 500")
                .isEqualTo(-1);
        assertThat(store.pollExpiringPage(base + 801)).isEqualTo(pa);
        assertThat(store.pollExpiringPage(base + 801)).isEqualTo(-1);

        // A writer lowers the deadline after the evictor looked: the reset must not undo it.
        long seen = store.minDeadline(pa);
        store.noteDeadline(a.location(), base + 750);
        store.resetMinDeadline(pa, seen, Long.MAX_VALUE);
        assertThat(store.minDeadline(pa)).isEqualTo(base + 750);
        assertThat(store.pollExpiringPage(base + 751)).isEqualTo(pa);

        // Reset to "nothing expires": never due again.
        store.resetMinDeadline(pa, base + 750, Long.MAX_VALUE);
        assertThat(store.minDeadline(pa)).isEqualTo(Long.MAX_VALUE);
        assertThat(store.pollExpiringPage(base + 1900)).isEqualTo(-1);

        // Page b, across the wrap.
        assertThat(store.pollExpiringPage(base + 2000)).isEqualTo(-1);
        assertThat(store.pollExpiringPage(base + 2001)).isEqualTo(pb);

        // A page that left the log is never returned.
        store.resetMinDeadline(pb, base + 2000, base + 2100);
        store.sealActive(pa);
        assertThat(store.oldestPage(0)).isEqualTo(pa);
        store.dequeueOldest(0);
        store.noteDeadline(a.location(), base + 2050);
        assertThat(store.pollExpiringPage(base + 3000)).isEqualTo(pb);
        assertThat(store.pollExpiringPage(base + 3000)).isEqualTo(-1);

        // requeueExpiring: look again later, even with no new deadline.
        store.requeueExpiring(pb, base + 4000);
        assertThat(store.pollExpiringPage(base + 3999)).isEqualTo(-1);
        assertThat(store.pollExpiringPage(base + 4001)).isEqualTo(pb);
        store.freeAll();
    }

    @Test
    void concurrentNoteDeadlineKeepsTheMinimum() throws Exception {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        Reserved r = reserveAndWrite(store, 0, 4, 4, true, (byte) 1);
        long[] minima = new long[4];
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int id = t;
            threads.add(new Thread(() -> {
                SplittableRandom random = new SplittableRandom(id);
                long min = Long.MAX_VALUE;
                for (int i = 0; i < 20_000; i++) {
                    long d = 1_000_000 + random.nextLong(1_000_000_000L);
                    min = Math.min(min, d);
                    store.noteDeadline(r.location(), d);
                }
                minima[id] = min;
            }));
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        long expected = Math.min(Math.min(minima[0], minima[1]), Math.min(minima[2], minima[3]));
        int page = (int) (r.location() / PAGE);
        assertThat(store.minDeadline(page)).isEqualTo(expected);
        assertThat(store.pollExpiringPage(expected)).isEqualTo(-1);
        assertThat(store.pollExpiringPage(expected + 1)).isEqualTo(page);
        store.freeAll();
    }

    // ---------------------------------------------------------------------------------------
    // Reading records

    @Test
    void keyEqualsAndHashOfKeyAtReadTheRecordsKey() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        SplittableRandom random = new SplittableRandom(8);
        for (int i = 0; i < 300; i++) {
            int keyLength = 1 + random.nextInt(i % 3 == 0 ? 400 : 20);
            boolean expires = random.nextBoolean();
            int valueLength = random.nextInt(300);
            byte[] key = new byte[keyLength];
            for (int j = 0; j < keyLength; j++) {
                key[j] = (byte) random.nextInt();
            }
            int format = store.shapes().formatFor(keyLength, valueLength, false);
            long location = store.reserve(0, format, keyLength, valueLength, expires, false);
            MemorySegment page = store.page(location);
            long keyAt = RecordLayout.writeHeader(
                    page, store.offset(location), format, keyLength, valueLength, false, expires, false, 1);
            MemorySegment.copy(MemorySegment.ofArray(key), 0, page, keyAt, keyLength);
            RecordLayout.markDecided(page, store.offset(location));

            assertThat(store.keyEquals(location, key, keyLength, new RecordLayout.Header()))
                    .isTrue();
            byte[] other = key.clone();
            other[random.nextInt(keyLength)] ^= 1;
            assertThat(store.keyEquals(location, other, keyLength, new RecordLayout.Header()))
                    .isFalse();
            byte[] longer = java.util.Arrays.copyOf(key, keyLength + 1);
            assertThat(store.keyEquals(location, longer, keyLength + 1, new RecordLayout.Header()))
                    .isFalse();
            if (keyLength > 1) {
                assertThat(store.keyEquals(location, key, keyLength - 1, new RecordLayout.Header()))
                        .isFalse();
            }
            assertThat(store.hashOfKeyAt(42, location, new RecordLayout.Header()))
                    .isEqualTo(dev.larder.internal.hash.KeyHash.hash(42, MemorySegment.ofArray(key), 0, keyLength));
        }
        store.freeAll();
    }

    @Test
    void theMainStripeFillsPagesOfTheMainQueueOnly() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 2, budget);
        int mainStripe = store.evictorStripe(PageStore.PROBATION);
        assertThat(mainStripe).isEqualTo(3);
        assertThat(store.evictorStripe(PageStore.WINDOW)).isEqualTo(2);
        List<Integer> windowPages = new ArrayList<>();
        List<Integer> mainPages = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Reserved w = reserveAndWrite(store, i % 3, 10, 1000, false, (byte) 1);
            Reserved m = reserveAndWrite(store, mainStripe, 10, 1000, false, (byte) 2);
            assertThat(store.queueOf(w.location())).isEqualTo(PageStore.WINDOW);
            assertThat(store.queueOf(m.location())).isEqualTo(PageStore.PROBATION);
            int wp = (int) (w.location() / PAGE);
            int mp = (int) (m.location() / PAGE);
            if (!windowPages.contains(wp)) {
                windowPages.add(wp);
            }
            if (!mainPages.contains(mp)) {
                mainPages.add(mp);
            }
        }
        assertThat(windowPages).doesNotContainAnyElementsOf(mainPages);
        assertThat(store.pagesInLog(PageStore.WINDOW)).isEqualTo(windowPages.size());
        assertThat(store.pagesInLog(PageStore.PROBATION)).isEqualTo(mainPages.size());
        assertThat(store.pagesInLog()).isEqualTo(windowPages.size() + mainPages.size());
        // Each stripe has its own FIFO, in activation order.
        for (int page : mainPages) {
            assertThat(store.oldestPage(store.evictorStripe(PageStore.PROBATION)))
                    .isEqualTo(page);
            store.dequeueOldest(store.evictorStripe(PageStore.PROBATION));
        }
        assertThat(store.oldestPage(store.evictorStripe(PageStore.PROBATION))).isEqualTo(-1);
        assertThat(store.oldestPage(0)).isEqualTo(windowPages.get(0));
        store.freeAll();
    }

    @Test
    void rejectsAPageSizeThatIsNotAPowerOfTwo() {
        assertThatThrownBy(() -> new PageStore(5000, 1 << 20, 1, new MemoryBudget(1 << 20)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPageOfMainMovesWholeWithItsLiveCountAndWritersCountOutOfItsNewQueue() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int probation = store.evictorStripe(PageStore.PROBATION);
        int protect = store.evictorStripe(PageStore.PROTECTED);
        // Three records on probation's first page, written by the evictor; then a fresh page.
        List<Long> first = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Reserved r = reserveAndWrite(store, probation, 10, 100, false, (byte) 1);
            first.add(r.location());
            store.evictorWrote(r.location());
        }
        int page = store.oldestPage(probation);
        assertThatThrownBy(() -> store.moveOldest(probation, protect, page, 0, 0))
                .as("an active page does not move")
                .isInstanceOf(IllegalStateException.class);
        store.sealActive(page);
        reserveAndWrite(store, probation, 10, 100, false, (byte) 2);
        assertThatThrownBy(() -> store.moveOldest(0, protect, page, 0, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> store.moveOldest(probation, store.evictorStripe(PageStore.WINDOW), page, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);

        // One record replaced by a writer, one moved away by the evictor: one live left.
        assertThat(store.recordLeft(first.get(0))).isEqualTo(PageStore.PROBATION);
        store.evictorTook(first.get(1));
        assertThat(store.liveRecords(page, 0, 0)).isEqualTo(1);
        assertThat(store.moveOldest(probation, protect, page, 0, 0)).isEqualTo(1);
        assertThat(store.queueOf(first.get(2))).isEqualTo(PageStore.PROTECTED);
        assertThat(store.oldestPage(probation)).isNotEqualTo(page);
        assertThat(store.pagesInLog(PageStore.PROTECTED)).isEqualTo(1);
        // From now on a writer counts the record out of protected, and the page holds none.
        assertThat(store.recordLeft(first.get(2))).isEqualTo(PageStore.PROTECTED);
        assertThat(store.liveRecords(page, 0, 0)).isZero();
        // Back to probation: the count goes with it.
        assertThat(store.moveOldest(protect, probation, page, 0, 0)).isZero();
        assertThat(store.queueOf(first.get(2))).isEqualTo(PageStore.PROBATION);
        store.freeAll();
    }

    @Test
    void aPageOfTheWindowLearnsItsRecordsWhenItMovesAndCountsOutOfItsNewQueueAfter() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        PageStore store = new PageStore(PAGE, 1 << 20, 1, budget);
        int windowStripe = 0; // a writer stripe of the window
        int probation = store.evictorStripe(PageStore.PROBATION);
        // Five records appended by writers, who count nothing; then a fresh page.
        List<Long> records = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            records.add(reserveAndWrite(store, windowStripe, 10, 100, false, (byte) 1)
                    .location());
        }
        int page = store.oldestPage(windowStripe);
        store.sealActive(page);
        reserveAndWrite(store, windowStripe, 10, 100, false, (byte) 2);
        assertThat(store.liveRecords(page, 5, 0))
                .as("the caller tells how many records it holds")
                .isEqualTo(5);
        // One replaced by a writer, one abandoned before it was installed, one expired by the
        // evictor off its cursor (counted on the page), one evicted by its cursor (counted there).
        assertThat(store.recordLeft(records.get(0))).isEqualTo(PageStore.WINDOW);
        store.recordAbandoned(records.get(1));
        store.evictorTook(records.get(2));
        int tookByCursor = 1; // records.get(3)
        assertThat(store.liveRecords(page, 5, tookByCursor)).isEqualTo(1);
        assertThatThrownBy(() -> store.moveOldest(windowStripe, windowStripe, page, 5, tookByCursor))
                .as("only to an evictor stripe")
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.moveOldest(windowStripe, probation, page, 5, tookByCursor))
                .isEqualTo(1);
        assertThat(store.queueOf(records.get(4))).isEqualTo(PageStore.PROBATION);
        assertThat(store.oldestPage(windowStripe)).isNotEqualTo(page);
        // Now a page of main: it knows its records, and a writer counts one out of probation.
        assertThat(store.liveRecords(page, 0, 0)).isEqualTo(1);
        assertThat(store.recordLeft(records.get(4))).isEqualTo(PageStore.PROBATION);
        assertThat(store.liveRecords(page, 0, 0)).isZero();
        assertThatThrownBy(() -> store.moveOldest(probation, store.evictorStripe(PageStore.WINDOW), page, 0, 0))
                .as("a page of main never goes back to the window")
                .isInstanceOf(IllegalArgumentException.class);

        // A page of the window that goes round to the window's young end (second chances) learns
        // its records once: a later move does not count them again.
        int second = store.oldestPage(windowStripe);
        store.sealActive(second);
        reserveAndWrite(store, windowStripe, 10, 100, false, (byte) 3);
        int windowHead = store.evictorStripe(PageStore.WINDOW);
        assertThat(store.moveOldest(windowStripe, windowHead, second, 1, 0)).isEqualTo(1);
        assertThat(store.queueOf(store.location(second, 0))).isEqualTo(PageStore.WINDOW);
        assertThat(store.liveRecords(second, 1, 0)).isEqualTo(1);
        store.freeAll();
    }
}
