package dev.larder.internal;

/**
 * Larder's own codecs, which are known to write exactly {@code size()} bytes and to read by
 * copying. The cache hands them the page itself; any other codec gets a slice bounded to its
 * bytes, so a codec that writes past its size throws instead of overwriting a neighbouring record.
 *
 * <p>Because their {@code read} only copies bytes into a new object and has no other effect, the
 * cache may run it on bytes that a concurrent writer is changing and throw the result away when
 * the read turns out to have raced (the optimistic read, see {@code NativeCache}); a user codec is
 * never given bytes that could change under it.
 *
 * <p>They also encode keys in one pass into a heap array known to be big enough, which is how
 * keys are encoded on every lookup: {@code size()} then {@code write()} would read a string twice,
 * and array stores are cheaper than segment accesses.
 */
public interface TrustedCodec<T> {
    /** An upper bound of the encoded size, cheap to compute (no pass over the value). */
    long maxEncodedSize(T value);

    /**
     * Encodes {@code value} at the start of {@code target} in one pass and returns its exact
     * length; {@code target} has at least {@link #maxEncodedSize} bytes.
     */
    int encodeKey(T value, byte[] target);

    /**
     * Whether {@code write} cannot fail once {@code size} has returned for the same value: then
     * the cache may rewrite a record in place with it, since a failure halfway would leave
     * neither the old value nor the new one. (A buffer or segment can change or close under a
     * write; a string, an array or a number cannot.)
     */
    default boolean infallibleWrite() {
        return false;
    }
}
