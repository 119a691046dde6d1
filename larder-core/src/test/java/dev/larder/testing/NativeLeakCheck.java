package dev.larder.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.LarderCache;
import dev.larder.internal.memory.NativeMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * A test's caches and the native memory outstanding when it began: made in {@code @BeforeEach},
 * {@link #closeAllAndCheck} in {@code @AfterEach} closes (again) every cache the test tracked, so
 * a failed test leaks nothing into the next, and asserts that every native byte came back.
 */
public final class NativeLeakCheck {
    private final long before = NativeMemory.outstandingBytes();
    private final List<LarderCache<?, ?>> open = new ArrayList<>();

    /** Tracks {@code cache} to be closed after the test. */
    public <C extends LarderCache<?, ?>> C track(C cache) {
        open.add(cache);
        return cache;
    }

    /** Native bytes held now beyond those outstanding when the test began. */
    public long held() {
        return NativeMemory.outstandingBytes() - before;
    }

    public void closeAllAndCheck() {
        open.forEach(LarderCache::close);
        assertThat(held())
                .as("native bytes outstanding after the test's caches were closed")
                .isZero();
    }
}
