package dev.larder.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.Codec;
import dev.larder.Codecs;
import dev.larder.internal.hash.KeyHash;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The encoding a partitioned cache leaves for its partition ({@link KeyScratch#handOff}) is
 * taken only by the same key object under the same codec, only once, and the hash remembered
 * with it is the one of the bytes under that seed.
 */
class KeyScratchHandOffTest {
    private static final int MAX = 1_000;

    @AfterEach
    void noHandOffLeftBehind() {
        KeyScratch.current().dropHandOff();
    }

    private static byte[] bytesOf(KeyScratch ks) {
        return Arrays.copyOf(ks.bytes, ks.length);
    }

    @Test
    void theSameKeyAndCodecTakeTheEncodingOnceWithItsHash() {
        Codec<String> utf8 = Codecs.utf8();
        String key = "handed-off";
        KeyScratch routed = KeyScratch.encode(utf8, key, MAX);
        long hash = routed.hash(42);
        routed.handOff(key, utf8);

        KeyScratch taken = KeyScratch.encode(utf8, key, MAX);
        assertThat(taken).isSameAs(routed);
        assertThat(new String(bytesOf(taken))).isEqualTo(key);
        assertThat(taken.hash(42)).isEqualTo(hash).isEqualTo(KeyHash.hash(42, taken.bytes, taken.length));
        assertThat(taken.hash(7)).as("another seed hashes again").isEqualTo(KeyHash.hash(7, taken.bytes, taken.length));
        taken.release();

        // Taken once: the next encode of the same object encodes (and hashes) afresh.
        byte[] mutable = {'a', 'b'};
        Codec<byte[]> bytes = Codecs.bytes();
        KeyScratch first = KeyScratch.encode(bytes, mutable, MAX);
        first.hash(42);
        first.handOff(mutable, bytes);
        KeyScratch.encode(bytes, mutable, MAX).release();
        mutable[1] = 'z';
        KeyScratch again = KeyScratch.encode(bytes, mutable, MAX);
        assertThat(bytesOf(again)).containsExactly('a', 'z');
        assertThat(again.hash(42)).isEqualTo(KeyHash.hash(42, new byte[] {'a', 'z'}, 2));
        again.release();
    }

    @Test
    void anotherCodecOrAnotherKeyObjectEncodesAfresh() {
        Codec<String> utf8 = Codecs.utf8();
        String key = "abc";
        KeyScratch routed = KeyScratch.encode(utf8, key, MAX);
        routed.hash(42);
        routed.handOff(key, utf8);
        KeyScratch other = KeyScratch.encode(new Reversed(), key, MAX);
        assertThat(new String(bytesOf(other))).isEqualTo("cba");
        assertThat(other.hash(42)).isEqualTo(KeyHash.hash(42, "cba".getBytes(), 3));
        other.release();

        KeyScratch again = KeyScratch.encode(utf8, "xyz", MAX);
        again.handOff("xyz", utf8);
        KeyScratch equalNotSame = KeyScratch.encode(utf8, new String("xyz"), MAX);
        assertThat(new String(bytesOf(equalNotSame))).isEqualTo("xyz");
        equalNotSame.release();

        KeyScratch dropped = KeyScratch.encode(utf8, key, MAX);
        dropped.handOff(key, utf8);
        dropped.dropHandOff();
        KeyScratch fresh = KeyScratch.encode(Codecs.utf8(), key, MAX);
        assertThat(new String(bytesOf(fresh))).isEqualTo(key);
        fresh.release();
    }

    /** A key longer than the taker allows is not taken: it is encoded and rejected there. */
    @Test
    void aTakerWithAShorterKeyLimitEncodesAndRejects() {
        Codec<String> utf8 = Codecs.utf8();
        String key = "0123456789";
        KeyScratch routed = KeyScratch.encode(utf8, key, MAX);
        routed.handOff(key, utf8);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> KeyScratch.encode(utf8, key, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key of 10 bytes");
    }

    private static final class Reversed implements Codec<String> {
        @Override
        public int size(String value) {
            return value.length();
        }

        @Override
        public void write(String value, MemorySegment target, long offset) {
            for (int i = 0; i < value.length(); i++) {
                target.set(ValueLayout.JAVA_BYTE, offset + i, (byte) value.charAt(value.length() - 1 - i));
            }
        }

        @Override
        public String read(MemorySegment source, long offset, int length) {
            StringBuilder b = new StringBuilder();
            for (int i = length - 1; i >= 0; i--) {
                b.append((char) source.get(ValueLayout.JAVA_BYTE, offset + i));
            }
            return b.toString();
        }
    }
}
