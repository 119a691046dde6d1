package dev.larder.internal.hash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.index.IndexWord;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.LongToIntFunction;
import org.junit.jupiter.api.Test;

class KeyHashTest {

    private static final long[] SEEDS = {0L, 1L, -1L, 0x9E3779B97F4A7C15L, 42L};

    private static long hash(long seed, byte[] key) {
        return KeyHash.hash(seed, MemorySegment.ofArray(key), 0, key.length);
    }

    private static byte[] randomBytes(SplittableRandom random, int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) random.nextInt();
        }
        return b;
    }

    @Test
    void deterministicAndIndependentOfWhereTheBytesAre() {
        SplittableRandom random = new SplittableRandom(1);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment page = arena.allocate(512, 8);
            for (int length = 0; length <= 300; length++) {
                byte[] key = randomBytes(random, length);
                for (long seed : SEEDS) {
                    long h = hash(seed, key);
                    assertThat(hash(seed, key.clone())).isEqualTo(h);
                    // In native memory, at any alignment, between other bytes (as in a page).
                    for (int offset : new int[] {0, 1, 3, 7, 8, 13}) {
                        page.fill((byte) random.nextInt());
                        MemorySegment.copy(MemorySegment.ofArray(key), 0, page, offset, length);
                        assertThat(KeyHash.hash(seed, page, offset, length))
                                .as("length %d at offset %d", length, offset)
                                .isEqualTo(h);
                    }
                    // In a larger heap array, at an offset.
                    byte[] padded = new byte[length + 20];
                    System.arraycopy(key, 0, padded, 9, length);
                    assertThat(KeyHash.hash(seed, MemorySegment.ofArray(padded), 9, length))
                            .isEqualTo(h);
                }
            }
        }
    }

    @Test
    void differentSeedsGiveDifferentHashes() {
        SplittableRandom random = new SplittableRandom(2);
        for (int length : new int[] {0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 100, 1000}) {
            byte[] key = randomBytes(random, length);
            Set<Long> hashes = new HashSet<>();
            for (int s = 0; s < 200; s++) {
                hashes.add(hash(random.nextLong(), key));
            }
            for (long seed : SEEDS) {
                hashes.add(hash(seed, key));
            }
            assertThat(hashes).as("length %d", length).hasSize(200 + SEEDS.length);
            // Seeds that differ in one bit only.
            for (int bit = 0; bit < 64; bit++) {
                assertThat(hash(1L << bit, key))
                        .as("length %d, bit %d", length, bit)
                        .isNotEqualTo(hash(0, key));
            }
        }
    }

    @Test
    void everyByteOfEveryLengthCounts() {
        SplittableRandom random = new SplittableRandom(3);
        int[] lengths = new int[65 + 4];
        for (int i = 0; i <= 64; i++) {
            lengths[i] = i;
        }
        lengths[65] = 100;
        lengths[66] = 1000;
        lengths[67] = 4097;
        lengths[68] = 65_535;
        for (int length : lengths) {
            for (long seed : new long[] {0, 77}) {
                byte[] key = randomBytes(random, length);
                long h = hash(seed, key);
                for (int i = 0; i < length; i++) {
                    if (length > 5000 && i > 64 && i < length - 64 && i % 97 != 0) {
                        continue; // sample the middle of the largest key
                    }
                    byte original = key[i];
                    for (int flip : new int[] {0x01, 0x80, 0xFF}) {
                        key[i] = (byte) (original ^ flip);
                        assertThat(hash(seed, key))
                                .as("length %d, byte %d ^ %x", length, i, flip)
                                .isNotEqualTo(h);
                    }
                    key[i] = original;
                }
                assertThat(hash(seed, key)).isEqualTo(h);
            }
        }
    }

    @Test
    void theLengthCountsEvenWhenTheBytesAreZero() {
        Set<Long> hashes = new HashSet<>();
        for (int length = 0; length <= 200; length++) {
            hashes.add(hash(0, new byte[length]));
        }
        assertThat(hashes).hasSize(201);
    }

    @Test
    void sequentialKeysSpreadEvenlyOverSlotsShardsAndTags() {
        int n = 1_000_000;
        long seed = 0x5DEECE66DL;
        long[] hashes = new long[n];
        byte[] key = new byte[8];
        ByteBuffer buffer = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
        MemorySegment segment = MemorySegment.ofArray(key);
        for (int i = 0; i < n; i++) {
            buffer.putLong(0, i);
            hashes[i] = KeyHash.hash(seed, segment, 0, 8);
        }
        // Home slots (bits 0-31) in a table that is not a power of two.
        assertUniform(hashes, 1000, h -> IndexWord.homeSlot(h, 1000), "home slot");
        // Shards (bits 32-47, low bits as the cache masks them).
        assertUniform(hashes, 1024, h -> IndexWord.shardBits(h) & 1023, "shard");
        // Tags (bits 48-63), folded into 1024 buckets by their high bits.
        assertUniform(hashes, 1024, h -> (int) (IndexWord.tagOf(h) >>> 6), "tag");
        // Low bits and high bits alone.
        assertUniform(hashes, 256, h -> (int) (h & 0xFF), "bits 0-7");
        assertUniform(hashes, 256, h -> (int) (h >>> 56), "bits 56-63");

        // Short string keys, another common shape.
        for (int i = 0; i < n; i++) {
            byte[] s = ("user:" + i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            hashes[i] = KeyHash.hash(seed, MemorySegment.ofArray(s), 0, s.length);
        }
        assertUniform(hashes, 1000, h -> IndexWord.homeSlot(h, 1000), "home slot of strings");
        assertUniform(hashes, 1024, h -> IndexWord.shardBits(h) & 1023, "shard of strings");
        assertUniform(hashes, 1024, h -> (int) (IndexWord.tagOf(h) >>> 6), "tag of strings");
        // No collisions of the full 64 bits among a million distinct keys (2^-25 chance by luck).
        assertThat(java.util.Arrays.stream(hashes).distinct().count()).isEqualTo(n);
    }

    /**
     * Chi-square of the bucket counts against the uniform distribution: with k - 1 degrees of
     * freedom its mean is k - 1 and its standard deviation sqrt(2(k - 1)); six deviations above is
     * a 1e-9 event for a good hash, and a bad one is far past it.
     */
    private static void assertUniform(long[] hashes, int buckets, LongToIntFunction bucketOf, String what) {
        long[] counts = new long[buckets];
        for (long h : hashes) {
            counts[bucketOf.applyAsInt(h)]++;
        }
        double expected = hashes.length / (double) buckets;
        double chi2 = 0;
        for (long c : counts) {
            chi2 += (c - expected) * (c - expected) / expected;
        }
        int df = buckets - 1;
        double bound = df + 6 * Math.sqrt(2.0 * df);
        assertThat(chi2).as("chi-square of %s over %d buckets", what, buckets).isLessThan(bound);
        // And not suspiciously perfect either (a counter, not a hash).
        assertThat(chi2)
                .as("chi-square of %s over %d buckets", what, buckets)
                .isGreaterThan(df - 6 * Math.sqrt(2.0 * df));
    }
}
