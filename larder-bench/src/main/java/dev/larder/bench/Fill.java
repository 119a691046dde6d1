package dev.larder.bench;

/** Helpers shared by the benchmarks and the probe. */
final class Fill {
    private Fill() {}

    /**
     * Puts {@code keys[i]} with {@code Keys.value(i, valueBytes)} for every i, then warns on stderr
     * if the cache holds less than 99% of them (GETs of the keys would then measure misses).
     */
    static void fill(BenchCache cache, String name, String[] keys, int valueBytes) {
        for (int i = 0; i < keys.length; i++) {
            cache.put(keys[i], Keys.value(i, valueBytes));
        }
        int present = countPresent(cache, keys);
        if (present < keys.length * 0.99) {
            System.err.printf(
                    "WARNING: %s holds %d of the %d entries it was sized for; GET misses will be measured%n",
                    name, present, keys.length);
        }
    }

    /** How many of the keys the cache holds. */
    static int countPresent(BenchCache cache, String[] keys) {
        int present = 0;
        for (String key : keys) {
            if (cache.get(key) != null) {
                present++;
            }
        }
        return present;
    }
}
