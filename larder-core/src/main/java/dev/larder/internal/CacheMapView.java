package dev.larder.internal;

import dev.larder.Codec;
import dev.larder.LarderCache;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The {@link ConcurrentMap} view of a cache. Every call goes straight to the cache; the views
 * iterate weakly consistently. Keys and values of the wrong type are simply not found (as in
 * {@link java.util.HashMap}); {@code remove(k, v)} and {@code replace(k, old, new)} compare the
 * encoded bytes of the values.
 */
final class CacheMapView<K, V> extends AbstractMap<K, V> implements ConcurrentMap<K, V> {
    private final LarderCache<K, V> cache;
    private final Codec<K> keyCodec;
    private final Codec<V> valueCodec;
    private final EntrySet entrySet = new EntrySet();

    CacheMapView(LarderCache<K, V> cache, Codec<K> keyCodec, Codec<V> valueCodec) {
        this.cache = cache;
        this.keyCodec = keyCodec;
        this.valueCodec = valueCodec;
    }

    @Override
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, cache.size());
    }

    @Override
    public boolean isEmpty() {
        return cache.size() == 0;
    }

    @Override
    public boolean containsKey(Object key) {
        K k = asKey(key);
        return k != null && cache.containsKey(k);
    }

    @Override
    public V get(Object key) {
        K k = asKey(key);
        return k == null ? null : cache.getIfPresent(k);
    }

    @Override
    public V put(K key, V value) {
        return cache.getAndPut(key, value);
    }

    @Override
    public V remove(Object key) {
        K k = asKey(key);
        return k == null ? null : cache.getAndRemove(k);
    }

    @Override
    public void putAll(Map<? extends K, ? extends V> map) {
        cache.putAll(map);
    }

    @Override
    public void clear() {
        cache.clear();
    }

    @Override
    public V putIfAbsent(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        for (; ; ) {
            if (cache.putIfAbsent(key, value)) {
                return null;
            }
            V current = cache.getIfPresent(key);
            if (current != null) {
                return current;
            }
        }
    }

    @Override
    public boolean remove(Object key, Object value) {
        K k = asKey(key);
        V v = asValue(value);
        if (k == null || v == null) {
            Objects.requireNonNull(key, "key");
            return false;
        }
        return cache.remove(k, v);
    }

    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        return cache.replace(key, oldValue, newValue);
    }

    @Override
    public V replace(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        for (; ; ) {
            V current = cache.getIfPresent(key);
            if (current == null) {
                return null;
            }
            if (cache.replace(key, current, value)) {
                return current;
            }
        }
    }

    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        return cache.compute(key, remapping);
    }

    @Override
    public V computeIfAbsent(K key, Function<? super K, ? extends V> mapping) {
        return cache.computeIfAbsent(key, mapping);
    }

    @Override
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        return cache.computeIfPresent(key, remapping);
    }

    @Override
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remapping) {
        return cache.merge(key, value, remapping);
    }

    @Override
    public Set<Entry<K, V>> entrySet() {
        return entrySet;
    }

    @SuppressWarnings("unchecked")
    private K asKey(Object key) {
        Objects.requireNonNull(key, "key");
        try {
            keyCodec.size((K) key);
            return (K) key;
        } catch (ClassCastException e) {
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private V asValue(Object value) {
        if (value == null) {
            return null;
        }
        try {
            valueCodec.size((V) value);
            return (V) value;
        } catch (ClassCastException e) {
            return null;
        }
    }

    private final class EntrySet extends AbstractSet<Entry<K, V>> {
        @Override
        public Iterator<Entry<K, V>> iterator() {
            return cache.entries();
        }

        @Override
        public int size() {
            return CacheMapView.this.size();
        }

        @Override
        public boolean contains(Object o) {
            if (!(o instanceof Map.Entry<?, ?> e) || e.getKey() == null || e.getValue() == null) {
                return false;
            }
            V current = get(e.getKey());
            return current != null && current.equals(e.getValue());
        }

        @Override
        public boolean remove(Object o) {
            if (!(o instanceof Map.Entry<?, ?> e) || e.getKey() == null || e.getValue() == null) {
                return false;
            }
            return CacheMapView.this.remove(e.getKey(), e.getValue());
        }

        @Override
        public void clear() {
            cache.clear();
        }
    }

    /** An entry of the iteration; {@code setValue} writes through to the cache. */
    static final class LiveEntry<K, V> extends SimpleEntry<K, V> {
        private static final long serialVersionUID = 1L;
        private final transient LarderCache<K, V> cache;

        LiveEntry(LarderCache<K, V> cache, K key, V value) {
            super(key, value);
            this.cache = cache;
        }

        @Override
        public V setValue(V value) {
            Objects.requireNonNull(value, "value");
            cache.put(getKey(), value);
            return super.setValue(value);
        }
    }
}
