package dev.larder.internal.policy;

/**
 * Chooses the share of the cache given to W-TinyLFU's admission window by hill climbing on the
 * hit rate: once per sample period it compares the period's hit rate with the previous one's,
 * keeps stepping the same way if it did not get worse and turns back if it did.
 *
 * <p>The first step shrinks the window: frequency usually beats recency, and a window grown
 * for nothing costs a loop or scan workload its hits while the climber finds out (the flat hit
 * rate of a loop would otherwise walk the window up to its bound). Steps start at 6.25% of the cache and shrink by 2% per adjustment, so the window settles
 * near the best share instead of swinging around it forever. A hit rate that moved by more than
 * 5 points between periods means the workload changed, not the window: the step restarts at
 * 6.25% so the climber can travel to the new best share quickly.
 *
 * <p>Two departures from Caffeine's climber, both measured on the simulator's 62 rows
 * (docs/hit-rates.md): a change of the hit rate smaller than its sampling noise (one standard
 * error of a period's hit rate) moves nothing, so a plateau does not make the
 * window random-walk into a cliff (corda at 1,024 entries walked the window down from 25% to 2%
 * on a flat 33.3% and fell to 7% for a period, twice); and a climber pushing against the
 * smallest or largest share steps back from it once (until the workload changes), since
 * staying there tells it nothing (scarab at 25,000 entries sat at a zero window for the whole
 * trace: 57.7% hits, 59.5% with the step back). Stepping back every time it met the bound cost
 * frequency-heavy workloads a point (zipf-0.8 at 10,000 entries). Together they moved the mean
 * by about +0.4 points.
 *
 * <p>Not thread-safe: the maintenance thread calls it, under the maintenance lock.
 */
public final class HillClimber {
    /** The window's share before any adjustment: small, as recency rarely beats frequency. */
    public static final double INITIAL_FRACTION = 0.01;
    /** Smallest share: no window at all, pure TinyLFU admission into the main space. */
    public static final double MIN_FRACTION = 0.0;
    /** Largest share: the main space keeps a fifth of the cache for frequently used entries. */
    public static final double MAX_FRACTION = 0.8;

    static final double INITIAL_STEP = 0.0625;
    static final double STEP_DECAY = 0.98;
    static final double RESTART_THRESHOLD = 0.05;
    /** Fewest requests per sample: below this the hit rate is noise (±1.5 points at 1,000). */
    static final long MIN_SAMPLE_PERIOD = 1_000;

    private final long samplePeriod;
    private double fraction = INITIAL_FRACTION;
    /** Signed: the direction of the last step and the size of the next. */
    private double step = -INITIAL_STEP;

    private double previousHitRate = Double.NaN;
    /**
     * Whether the climber has stepped back from a bound since the workload last changed: it does
     * so once; if the step back did not pay, it returns to the bound and stays there.
     */
    private boolean steppedBackFromBound;

    private long periodStartHits;
    private long periodStartMisses;

    /**
     * A climber for a cache of {@code capacity} entries: it adjusts after every 10 × capacity
     * requests, and at least every {@value #MIN_SAMPLE_PERIOD}.
     */
    public HillClimber(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative: " + capacity);
        }
        this.samplePeriod = Math.max(MIN_SAMPLE_PERIOD, 10 * Math.min(capacity, Long.MAX_VALUE / 10));
    }

    /** The window's share of the cache, in [{@value #MIN_FRACTION}, {@value #MAX_FRACTION}]. */
    public double windowFraction() {
        return fraction;
    }

    /** Requests (hits plus misses) per sample period. */
    public long samplePeriod() {
        return samplePeriod;
    }

    /**
     * Takes the cache's CUMULATIVE hit and miss counts; once a sample period of requests has
     * passed since the last adjustment, adjusts the window share from this period's hit rate.
     * Returns true if the share changed. Counts that went backwards (statistics reset) start a
     * new period and are not judged.
     */
    public boolean record(long hits, long misses) {
        long periodHits = hits - periodStartHits;
        long periodMisses = misses - periodStartMisses;
        if (periodHits < 0 || periodMisses < 0) {
            periodStartHits = hits;
            periodStartMisses = misses;
            return false;
        }
        long requests = periodHits + periodMisses;
        if (requests < samplePeriod) {
            return false;
        }
        periodStartHits = hits;
        periodStartMisses = misses;
        double hitRate = (double) periodHits / requests;
        return adjust(hitRate, requests);
    }

    /**
     * The standard error of a period's hit rate over {@code requests} requests: a change smaller
     * than it is as likely noise as the window's doing. (The binomial variance, floored at 0.01
     * so that a hit rate near 0 or 1 still needs a real change; one standard error, not two, was
     * the better of the two measured.)
     */
    static double samplingNoise(double hitRate, double previous, long requests) {
        double p = (hitRate + previous) / 2;
        double variance = Math.max(p * (1 - p), 0.01);
        return Math.sqrt(variance / requests);
    }

    private boolean adjust(double hitRate, long requests) {
        double previous = previousHitRate;
        previousHitRate = hitRate;
        if (!Double.isNaN(previous)) { // the first period has nothing to compare: step down
            if (Math.abs(hitRate - previous) < samplingNoise(hitRate, previous, requests)) {
                step *= STEP_DECAY;
                return false;
            }
            if (hitRate < previous) {
                step = -step;
            }
            if (Math.abs(hitRate - previous) > RESTART_THRESHOLD) {
                step = Math.copySign(INITIAL_STEP, step);
                steppedBackFromBound = false;
            }
        }
        boolean pushingAgainstBound = fraction == MIN_FRACTION && step < 0 || fraction == MAX_FRACTION && step > 0;
        if (pushingAgainstBound && !steppedBackFromBound) {
            step = -step;
            steppedBackFromBound = true;
        }
        double next = Math.clamp(fraction + step, MIN_FRACTION, MAX_FRACTION);
        step *= STEP_DECAY;
        boolean changed = next != fraction;
        fraction = next;
        return changed;
    }
}
