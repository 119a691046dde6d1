package dev.larder.simulator.synthetic;

import dev.larder.simulator.Workload;
import java.util.List;

/** A workload generated from a fixed seed; it scales its key space with the cache size. */
public record SyntheticWorkload(
        String name, String description, List<Integer> sizes, boolean phaseChange, Generator generator)
        implements Workload {

    /** Generates the requests for one cache size. */
    @FunctionalInterface
    public interface Generator {
        Requests generate(int cacheSize, int requests, long seed);
    }

    /** How many requests each synthetic workload has. */
    public static final int REQUESTS = 2_000_000;

    @Override
    public boolean sizeDependent() {
        return true;
    }

    @Override
    public Requests requests(int cacheSize, long limit) {
        int count = (int) Math.min(REQUESTS, limit);
        return generator.generate(cacheSize, count, seed(name, cacheSize));
    }

    /** A seed fixed by the workload's name and size, the same on every JVM. */
    static long seed(String name, int cacheSize) {
        return Keys.mix(0x4C41524445520001L ^ ((long) name.hashCode() << 32) ^ cacheSize);
    }
}
