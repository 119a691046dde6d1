package dev.larder;

import java.lang.foreign.MemorySegment;

/**
 * Turns values of type {@code T} into bytes in native memory and back.
 *
 * <p>A codec writes straight into the cache's native memory: {@link #size} says how many bytes
 * the value needs, then {@link #write} fills exactly that many bytes at {@code offset}. Nothing
 * is copied through the heap. {@link #read} gets a read-only segment and must not keep it after
 * it returns: the bytes may be reused once the call ends.
 *
 * <p>Implementations must be thread-safe and deterministic: equal values encode to equal bytes,
 * because keys are compared byte for byte.
 *
 * @param <T> the type encoded
 */
public interface Codec<T> {

    /**
     * Returns the exact number of bytes {@link #write} will write for {@code value}.
     *
     * @throws NullPointerException if {@code value} is null
     */
    int size(T value);

    /**
     * Writes {@code value} into {@code target} at {@code offset}, exactly {@link #size} bytes.
     *
     * @throws IndexOutOfBoundsException if the codec writes outside its {@link #size} bytes
     */
    void write(T value, MemorySegment target, long offset);

    /**
     * Reads a value from {@code length} bytes of {@code source} at {@code offset}.
     *
     * @throws IllegalArgumentException if the bytes are not a valid encoding
     */
    T read(MemorySegment source, long offset, int length);
}
