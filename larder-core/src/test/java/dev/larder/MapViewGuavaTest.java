package dev.larder;

import com.google.common.collect.testing.ConcurrentMapTestSuiteBuilder;
import com.google.common.collect.testing.TestStringMapGenerator;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import dev.larder.internal.memory.NativeMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import junit.framework.Test;
import junit.framework.TestCase;
import junit.framework.TestSuite;
import org.junit.runner.RunWith;
import org.junit.runners.AllTests;

/**
 * Guava testlib's {@code ConcurrentMap} conformance suite against {@link LarderCache#asMap()}
 * (JUnit 3 style, run by the JUnit Vintage engine). Each test gets a fresh cache; the caches are
 * closed after every test and the suite checks at the end that all native memory came back.
 */
@RunWith(AllTests.class)
public class MapViewGuavaTest {
    private static final List<LarderCache<String, String>> OPEN = new ArrayList<>();
    private static long nativeBefore;

    public static Test suite() {
        TestSuite suite = new TestSuite("LarderCache.asMap()");
        suite.addTest(new TestCase("recordNativeMemoryBefore") {
            @Override
            protected void runTest() {
                nativeBefore = NativeMemory.outstandingBytes();
            }
        });
        suite.addTest(ConcurrentMapTestSuiteBuilder.using(new TestStringMapGenerator() {
                    @Override
                    protected Map<String, String> create(Map.Entry<String, String>[] entries) {
                        LarderCache<String, String> cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                                .maximumBytes(256 * 1024) // plenty for the few entries a test uses
                                .build();
                        synchronized (OPEN) {
                            OPEN.add(cache);
                        }
                        Map<String, String> map = cache.asMap();
                        for (Map.Entry<String, String> e : entries) {
                            map.put(e.getKey(), e.getValue());
                        }
                        return map;
                    }
                })
                .named("LarderCache.asMap")
                .withFeatures(
                        CollectionSize.ANY, MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE)
                .withTearDown(MapViewGuavaTest::closeAll)
                .createTestSuite());
        suite.addTest(new TestCase("allNativeMemoryReturned") {
            @Override
            protected void runTest() {
                closeAll();
                assertEquals(
                        "native bytes outstanding after every cache of the suite was closed",
                        nativeBefore,
                        NativeMemory.outstandingBytes());
            }
        });
        return suite;
    }

    private static void closeAll() {
        synchronized (OPEN) {
            OPEN.forEach(LarderCache::close);
            OPEN.clear();
        }
    }
}
