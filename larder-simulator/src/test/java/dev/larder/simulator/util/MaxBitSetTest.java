package dev.larder.simulator.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class MaxBitSetTest {
    @Test
    void agreesWithATreeSet() {
        SplittableRandom random = new SplittableRandom(1);
        for (int capacity : new int[] {1, 63, 64, 65, 4096, 4097, 300_000}) {
            MaxBitSet set = new MaxBitSet(capacity);
            TreeSet<Integer> reference = new TreeSet<>();
            assertThat(set.max()).isEqualTo(-1);
            for (int op = 0; op < 20_000; op++) {
                int i = random.nextInt(capacity);
                if (random.nextInt(3) == 0) {
                    set.clear(i);
                    reference.remove(i);
                } else {
                    set.set(i);
                    reference.add(i);
                }
                assertThat(set.get(i)).isEqualTo(reference.contains(i));
                assertThat(set.max()).isEqualTo(reference.isEmpty() ? -1 : reference.last());
                if (random.nextInt(50) == 0 && !reference.isEmpty()) {
                    int max = reference.pollLast();
                    set.clear(max);
                }
            }
        }
        assertThatThrownBy(() -> new MaxBitSet(10).set(10)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void longIntMapAgreesWithAHashMap() {
        SplittableRandom random = new SplittableRandom(2);
        LongIntMap map = new LongIntMap(4);
        Map<Long, Integer> reference = new HashMap<>();
        for (int op = 0; op < 100_000; op++) {
            long key = random.nextLong(20_000) - 10_000;
            int value = random.nextInt(1_000_000);
            Integer previous = reference.put(key, value);
            assertThat(map.put(key, value)).isEqualTo(previous == null ? -1 : previous);
            long probe = random.nextLong(20_000) - 10_000;
            assertThat(map.get(probe)).isEqualTo(reference.getOrDefault(probe, -1));
        }
        assertThat(map.size()).isEqualTo(reference.size());
    }
}
