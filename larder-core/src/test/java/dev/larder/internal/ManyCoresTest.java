package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cache on a machine of 32 cores, whatever this one has: a child JVM with {@code
 * -XX:ActiveProcessorCount=32}, where a cache has 32 writer stripes (each with its FIFO of the
 * window's pages) and 64 stripes of access buffers, of which three writers use a few. The
 * evictor takes the FIFOs that hold pages in turn ({@code PageStore#nextQueued}) and the drains
 * look only at the stripes of threads numbered so far: a FIFO it skipped would keep every page
 * its writer filled.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ManyCoresTest {
    private static final int ENTRIES = 10_000;
    private static final int WRITERS = 3;
    private static final int INSERTS_PER_WRITER = 60_000;

    @Test
    void threeWritersOnAMachineOf32CoresKeepTheBoundAndEveryStripesFifoShort() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(
                java.toString(),
                "-XX:ActiveProcessorCount=32",
                "-Xmx512m",
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                ManyCoresTest.class.getName()));
        Path log = Files.createTempFile("larder-many-cores", ".log");
        try {
            Process child = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            boolean ended = child.waitFor(100, TimeUnit.SECONDS);
            child.destroyForcibly();
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(ended).as("the child JVM ends: %s", output).isTrue();
            assertThat(child.exitValue()).as(output).isZero();
            assertThat(output).contains("ok: 32 cores, 32 writer stripes");
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** The child: fills a cache from three threads far past its bound, then checks it. */
    public static void main(String[] args) throws IOException, InterruptedException {
        int cores = Runtime.getRuntime().availableProcessors();
        try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumEntries(ENTRIES)
                .maximumBytes(32L << 20)
                .build()) {
            NativeCache<?, ?> nc = (NativeCache<?, ?>) cache;
            int stripes = nc.store.writerStripes();
            check(stripes == 32, "32 writer stripes on 32 cores, got " + stripes);
            Thread[] writers = new Thread[WRITERS];
            Throwable[] failure = new Throwable[1];
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                writers[w] = new Thread(() -> {
                    try {
                        for (int i = 0; i < INSERTS_PER_WRITER; i++) {
                            cache.put(key(writer, i), value(writer, i));
                        }
                    } catch (Throwable t) {
                        failure[0] = t;
                    }
                });
                writers[w].start();
            }
            for (Thread t : writers) {
                t.join();
            }
            if (failure[0] != null) {
                throw new AssertionError("a writer failed", failure[0]);
            }
            cache.cleanUp();
            long size = cache.size();
            check(size <= ENTRIES && size > ENTRIES / 2, "the cache holds " + size + " of a bound of " + ENTRIES);
            // The window's records leave a writer's FIFO through the evictor's turn over the
            // FIFOs (evicted, or their pages moved to main whole), so each holds a few pages;
            // one the turn passed over would keep every page its writer filled (~4,000 here).
            StringBuilder queued = new StringBuilder();
            for (int stripe = 0; stripe < stripes; stripe++) {
                int pages = nc.store.pagesQueued(stripe);
                check(pages <= 200, "writer stripe " + stripe + "'s FIFO holds " + pages + " pages");
                queued.append(stripe == 0 ? "" : " ").append(pages);
            }
            for (int w = 0; w < WRITERS; w++) {
                int newest = INSERTS_PER_WRITER - 1;
                byte[] v = cache.getIfPresent(key(w, newest));
                check(v == null || v[0] == (byte) newest && v[1] == (byte) w, "writer " + w + "'s last value whole");
            }
            System.out.println("ok: " + cores + " cores, " + stripes + " writer stripes, " + size
                    + " entries; pages in the writer stripes' FIFOs: " + queued);
        }
    }

    private static String key(int writer, int i) {
        return "w" + writer + "-" + i;
    }

    private static byte[] value(int writer, int i) {
        byte[] v = new byte[64];
        v[0] = (byte) i;
        v[1] = (byte) writer;
        return v;
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            System.out.println("failed: " + what);
            System.exit(1);
        }
    }
}
