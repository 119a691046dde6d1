package dev.larder.internal;

import java.lang.foreign.MemorySegment;

/**
 * Larder's own codecs, which are known to write exactly {@code size()} bytes. The cache hands
 * them the page itself; any other codec gets a slice bounded to its bytes, so a codec that writes
 * past its size throws instead of overwriting a neighbouring record.
 *
 * <p>They can also encode in one pass into a buffer known to be big enough, which is how keys
 * are encoded on every lookup: {@code size()} then {@code write()} would read a string twice.
 */
public interface TrustedCodec<T> {
    /** An upper bound of the encoded size, cheap to compute (no pass over the value). */
    long maxEncodedSize(T value);

    /**
     * Encodes {@code value} at {@code offset} in one pass and returns its exact length; {@code
     * target} has at least {@link #maxEncodedSize} bytes from {@code offset}.
     */
    int encode(T value, MemorySegment target, long offset);
}
