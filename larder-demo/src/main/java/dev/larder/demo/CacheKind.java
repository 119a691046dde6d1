package dev.larder.demo;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import java.util.List;
import java.util.Locale;

/** The caches the demo compares, each behind the same small interface. */
enum CacheKind {
    LARDER("Larder", List.of("--enable-native-access=ALL-UNNAMED")) {
        @Override
        DemoCache open(Settings settings) {
            LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                    .maximumBytes(settings.larderMaximumBytes())
                    .maximumEntries(settings.entries())
                    .expectedEntries(settings.entries())
                    .build();
            return new DemoCache() {
                @Override
                public byte[] get(String key) {
                    return cache.getIfPresent(key);
                }

                @Override
                public void put(String key, byte[] value) {
                    cache.put(key, value);
                }

                @Override
                public void cleanUp() {
                    cache.cleanUp();
                }

                @Override
                public long size() {
                    return cache.size();
                }

                @Override
                public long nativeBytes() {
                    return cache.memoryUsed();
                }

                @Override
                public void close() {
                    cache.close();
                }
            };
        }
    },

    CAFFEINE("Caffeine", List.of()) {
        @Override
        DemoCache open(Settings settings) {
            Cache<String, byte[]> cache =
                    Caffeine.newBuilder().maximumSize(settings.entries()).build();
            return new DemoCache() {
                @Override
                public byte[] get(String key) {
                    return cache.getIfPresent(key);
                }

                @Override
                public void put(String key, byte[] value) {
                    cache.put(key, value);
                }

                @Override
                public void cleanUp() {
                    cache.cleanUp();
                }

                @Override
                public long size() {
                    return cache.estimatedSize();
                }

                @Override
                public long nativeBytes() {
                    return 0;
                }

                @Override
                public void close() {
                    cache.invalidateAll();
                    cache.cleanUp();
                }
            };
        }
    };

    /** What the demo does with a cache. */
    interface DemoCache extends AutoCloseable {
        byte[] get(String key);

        void put(String key, byte[] value);

        /** Runs pending maintenance so that sizes and memory are settled. */
        void cleanUp();

        long size();

        /** Memory held outside the Java heap. */
        long nativeBytes();

        @Override
        void close();
    }

    private final String displayName;
    private final List<String> jvmFlags;

    CacheKind(String displayName, List<String> jvmFlags) {
        this.displayName = displayName;
        this.jvmFlags = jvmFlags;
    }

    /** Builds an empty cache that holds {@code settings.entries()} without evicting. */
    abstract DemoCache open(Settings settings);

    String displayName() {
        return displayName;
    }

    /** JVM flags this cache's measured JVM needs beyond the common ones. */
    List<String> jvmFlags() {
        return jvmFlags;
    }

    /** The name used on the command line: {@code larder} or {@code caffeine}. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    static CacheKind byId(String id) {
        for (CacheKind k : values()) {
            if (k.id().equalsIgnoreCase(id)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown cache '" + id + "': use larder or caffeine");
    }
}
