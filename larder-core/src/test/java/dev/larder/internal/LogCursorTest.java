package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The evictor's cursor against a writer that appends to the page under it and seals it between
 * the cursor's two questions about the page's end: the interleaving that once retired a page
 * with a live record past the end the cursor knew (a live index word then led into a recycled
 * page). The window is nanoseconds wide in a cache; the cursor's test hook runs the writer in it.
 */
class LogCursorTest {
    private static final int PAGE = 4096;
    private static final int KEY = 16;
    private static final int VALUE = 100;

    private final MemoryBudget budget = new MemoryBudget(1 << 20);
    private final PageStore store = new PageStore(PAGE, PAGE, 1, budget);

    @AfterEach
    void free() {
        store.freeAll();
    }

    /** Reserves and writes a decided record on writer stripe 0; returns its location. */
    private long append() {
        long location = store.reserve(0, RecordLayout.FORMAT_VARINT, KEY, VALUE, false, false);
        assertThat(location).as("a page for the record").isNotEqualTo(PageStore.NO_PAGE);
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        long keyAt =
                RecordLayout.writeHeader(page, offset, RecordLayout.FORMAT_VARINT, KEY, VALUE, false, false, false, 0);
        page.asSlice(keyAt, KEY + VALUE).fill((byte) 7);
        RecordLayout.markDecided(page, offset);
        return location;
    }

    @Test
    void aRecordAppendedAndSealedBetweenTheCursorsQuestionsIsWalkedBeforeThePageIsRetired() {
        long first = append();
        LogCursor cursor = new LogCursor(store, 0);
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).isEqualTo(first);
        cursor.advance();

        long[] raced = {-1};
        cursor.betweenEndQuestions = () -> {
            cursor.betweenEndQuestions = null; // once
            raced[0] = append();
            store.sealActive(store.pageOf(first));
        };
        LogCursor.Next next = cursor.next(false);
        assertThat(raced[0]).as("the writer ran between the questions").isGreaterThanOrEqualTo(0);
        assertThat(store.pageOf(raced[0]))
                .as("the raced record is on the cursor's page")
                .isEqualTo(store.pageOf(first));
        assertThat(next)
                .as("the record appended before the seal is walked, not dropped")
                .isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).isEqualTo(raced[0]);
        cursor.advance();

        assertThat(cursor.next(false)).as("then the sealed page is passed").isEqualTo(LogCursor.Next.PAGE_RETIRED);
        assertThat(cursor.retiredPage).isEqualTo(store.pageOf(first));
    }

    @Test
    void anActivePageIsNotPassedWhileItsWriterMayAppend() {
        append();
        LogCursor cursor = new LogCursor(store, 0);
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.RECORD);
        cursor.advance();
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.NOTHING);
        long second = append();
        assertThat(cursor.next(false)).as("a record appended later is found").isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).isEqualTo(second);
    }

    /**
     * The cursor answers from the record it parsed until it moves: a reader's access since is
     * read from the record itself, and once past it the cursor is on the next record, not the
     * same one again.
     */
    @Test
    void theRecordUnderTheCursorIsParsedOnceAndItsAccessIsReadFresh() {
        long first = append();
        long second = append();
        LogCursor cursor = new LogCursor(store, 0);
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).isEqualTo(first);
        assertThat(cursor.access()).isZero();
        RecordLayout.recordAccess(store.page(first), store.offset(first)); // a reader's hit
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).isEqualTo(first);
        assertThat(cursor.access()).as("read from the record, not the parse").isEqualTo(1);
        cursor.advance();
        assertThat(cursor.next(false)).isEqualTo(LogCursor.Next.RECORD);
        assertThat(cursor.location).as("past the first record").isEqualTo(second);
        assertThat(cursor.end).isEqualTo(cursor.header.end);
    }
}
