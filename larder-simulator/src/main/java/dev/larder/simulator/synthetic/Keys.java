package dev.larder.simulator.synthetic;

/** Maps ranks and positions to keys: a bijection, so distinct inputs stay distinct keys. */
final class Keys {
    private Keys() {}

    /**
     * A bijective 64-bit mixer (xor-shifts and odd multipliers, each invertible): spreads small
     * consecutive integers over the whole key space, as real keys are, without collisions.
     */
    static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }
}
