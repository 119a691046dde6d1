package dev.larder;

/**
 * Entry point: {@code Larder.newBuilder(Codecs.utf8(), Codecs.bytes()).maximumBytes(...)}.
 *
 * <pre>{@code
 * try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
 *         .maximumBytes(256L << 20)
 *         .expireAfterWrite(Duration.ofMinutes(10))
 *         .build()) {
 *     cache.put("user:42", payload);
 *     byte[] hit = cache.getIfPresent("user:42");
 * }
 * }</pre>
 */
public final class Larder {
    private Larder() {}

    /** A builder for a cache with the given key and value codecs. */
    public static <K, V> LarderBuilder<K, V> newBuilder(Codec<K> keyCodec, Codec<V> valueCodec) {
        return new LarderBuilder<>(keyCodec, valueCodec);
    }
}
