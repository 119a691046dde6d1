package dev.larder.simulator.policy;

import java.util.Locale;

/** The policies the simulator knows, in the order of the table's columns. */
public enum PolicyType {
    LRU("lru", "LRU", true),
    /** Not deterministic: its admission lets a warm candidate in at random (ThreadLocalRandom, 1 in 128). */
    CAFFEINE("caffeine", "Caffeine", false),
    /** Seeds its hash and samples some maintenance at random. */
    LARDER("larder", "Larder", false),
    BELADY("belady", "Bélády", true);

    private final String id;
    private final String label;
    private final boolean deterministic;

    PolicyType(String id, String label, boolean deterministic) {
        this.id = id;
        this.label = label;
        this.deterministic = deterministic;
    }

    /** True if two runs over the same sequence always give the same hits; others are repeated by {@code --repeat}. */
    public boolean deterministic() {
        return deterministic;
    }

    /** The name on the command line and in the CSV/JSON. */
    public String id() {
        return id;
    }

    /** The name in tables and charts. */
    public String label() {
        return label;
    }

    /** A new, empty policy for {@code capacity} entries that will see {@code requests}. */
    public Policy create(int capacity, long[] requests) {
        return switch (this) {
            case LRU -> new LruPolicy(capacity);
            case CAFFEINE -> new CaffeinePolicy(capacity);
            case LARDER -> new LarderPolicy(capacity);
            case BELADY -> new BeladyPolicy(capacity, requests);
        };
    }

    /** The policy of that id (also {@code opt}/{@code optimal} for Bélády), or an exception listing the ids. */
    public static PolicyType of(String id) {
        String key = id.trim().toLowerCase(Locale.ROOT);
        if (key.equals("opt") || key.equals("optimal") || key.equals("clairvoyant")) {
            return BELADY;
        }
        for (PolicyType type : values()) {
            if (type.id.equals(key)) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown policy '" + id + "'; known: lru, caffeine, larder, belady");
    }
}
