package dev.larder;

import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Records every removal notification. */
final class RecordingListener<K, V> implements RemovalListener<K, V> {
    record Notice<K, V>(K key, V value, RemovalCause cause, Thread thread) {
        @Override
        public String toString() {
            return "(" + key + ", " + abbreviate(value) + ", " + cause + ")";
        }
    }

    private final List<Notice<K, V>> notices = new CopyOnWriteArrayList<>();

    @Override
    public void onRemoval(K key, V value, RemovalCause cause) {
        notices.add(new Notice<>(key, value, cause, Thread.currentThread()));
    }

    List<Notice<K, V>> notices() {
        return new ArrayList<>(notices);
    }

    List<Notice<K, V>> notices(RemovalCause cause) {
        return notices.stream().filter(n -> n.cause() == cause).toList();
    }

    long count(RemovalCause cause) {
        return notices.stream().filter(n -> n.cause() == cause).count();
    }

    void clear() {
        notices.clear();
    }

    /**
     * Waits (up to 5 s) until at least {@code count} notices match; runs {@code poke} between
     * polls (e.g. {@code cache::cleanUp}, or nothing).
     */
    List<Notice<K, V>> await(Predicate<Notice<K, V>> filter, int count, Runnable poke) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            List<Notice<K, V>> matching = notices.stream().filter(filter).toList();
            if (matching.size() >= count) {
                return matching;
            }
            if (System.nanoTime() > deadline) {
                fail("waited 5 s for " + count + " matching removal notices, got " + matching + "; all: " + notices);
            }
            poke.run();
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    static String abbreviate(Object value) {
        if (value == null) {
            return "null";
        }
        String s = value instanceof byte[] b ? "byte[" + b.length + "]" : String.valueOf(value);
        return s.length() > 40 ? s.substring(0, 40) + "...(" + s.length() + " chars)" : s;
    }
}
