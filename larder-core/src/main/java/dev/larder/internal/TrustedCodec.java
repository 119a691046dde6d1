package dev.larder.internal;

/**
 * Marks Larder's own codecs, which are known to write exactly {@code size()} bytes. The cache
 * hands them the page itself; any other codec gets a slice bounded to its bytes, so a codec
 * that writes past its size throws instead of overwriting a neighbouring record.
 */
public interface TrustedCodec {}
