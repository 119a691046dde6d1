package dev.larder;

import java.lang.foreign.MemorySegment;

/**
 * A zero-copy read of a cached value: the callback sees a read-only, bounds-checked view of the
 * value's bytes in native memory.
 *
 * <p>The view is valid only while {@link #read} runs; the cache does not reuse the memory before
 * it returns. Keep the callback short and do not write to the cache from inside it: memory
 * reclamation waits for every running callback. Using the view after the callback returns, or
 * after the cache is closed, throws {@link IllegalStateException} or reads bytes of another
 * entry, never crashes the JVM; copy out what you need to keep.
 *
 * @param <R> the result type
 */
@FunctionalInterface
public interface ValueReader<R> {
    /** Reads the value; {@code value} spans exactly the value's bytes and is read-only. */
    R read(MemorySegment value);
}
