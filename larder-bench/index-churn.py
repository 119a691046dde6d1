#!/usr/bin/env python3
"""How an index table's probes hold up while a cache churns at its bound.

    python3 larder-bench/index-churn.py [--load 0.8] [--buckets 2791] [--churn 0 1 3]

A simulation of table designs, not of Larder's code: N keys with random hashes fill a table to
the load, then "churn" times N rounds each remove a random key and insert a new one (a cache at
its bound evicts one entry per insert). It prints, per design, the cache lines a hit and a miss
read (a line is 64 bytes: eight 8-byte words), the share of keys in their home line or bucket,
the most buckets or slots any insert passed over, and the slots or buckets an insert and a
removal walk. The designs:

- rh: Larder's index since 2026-11 (IndexShard): 8-byte words, linear probing, Robin Hood
  placement, backward-shift deletion; a miss stops at a word closer to its home than the probe.
- buckets-double: a 64-byte bucket of a control word (7-bit tag per slot, overflow count) and
  seven words; a full bucket sends a key on by a step from its tag (double hashing); a probe goes
  on while the bucket's overflow count is not 0 (F14-like; branch experiment/bucketed-index-tags).
- buckets-linear: the same buckets, stepping to the next bucket, and a removal that pulls a key
  passing over the freed bucket back into it (a bucket-level backward shift).
- buckets-home: buckets-linear, with each bucket also counting its own home's keys placed in
  later buckets; a probe stops once it has seen them all (so most misses read one line).

docs/speed-work.md (fifty-first session) has what it showed.
"""
import argparse
import random


def is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


class RobinHood:
    name = "rh"

    def __init__(self, buckets, rnd):
        self.cap = buckets * 8  # the same bytes as `buckets` lines
        self.slots = [None] * self.cap  # (key, home)
        self.rnd = rnd
        self.max_passed = 0
        self.walk_insert = 0
        self.walk_remove = 0
        self.home = {}

    def dist(self, i, home):
        return (i - home) % self.cap

    def insert(self, key):
        home = self.rnd.randrange(self.cap)
        self.home[key] = home
        cur, d, i = (key, home), 0, home
        while True:
            self.walk_insert += 1
            e = self.slots[i]
            if e is None:
                self.slots[i] = cur
                return
            ed = self.dist(i, e[1])
            if ed < d:
                self.slots[i], cur, d = cur, e, ed
            i = (i + 1) % self.cap
            d += 1
            self.max_passed = max(self.max_passed, d)

    def remove(self, key):
        i = self.home.pop(key)
        while self.slots[i][0] != key:
            i = (i + 1) % self.cap
        self._shift(i)

    def _shift(self, i):
        while True:
            self.walk_remove += 1
            n = (i + 1) % self.cap
            e = self.slots[n]
            if e is None or self.dist(n, e[1]) == 0:
                self.slots[i] = None
                return
            self.slots[i] = e
            i = n

    def probe_lines(self, home, key=None):
        """Lines read by a probe from `home` for `key` (None: a missing key)."""
        lines, i, d = {home // 8}, home, 0
        while True:
            e = self.slots[i]
            lines.add(i // 8)
            if e is None or self.dist(i, e[1]) < d or (key is not None and e[0] == key):
                return len(lines)
            i = (i + 1) % self.cap
            d += 1

    def capacity(self):
        return self.cap

    def hits(self):
        """Lines each present key's probe reads, and the share of keys in their home's line."""
        keys = [(e[0], e[1], i) for i, e in enumerate(self.slots) if e is not None]
        lines = [self.probe_lines(home, key) for key, home, _ in keys]
        return lines, sum(1 for _, home, i in keys if i // 8 == home // 8) / len(keys)

    def miss_lines(self):
        return self.probe_lines(self.rnd.randrange(self.cap))


class Buckets:
    def __init__(self, buckets, rnd, linear):
        while not is_prime(buckets):
            buckets += 1
        self.n = buckets
        self.b = [[] for _ in range(buckets)]  # (key, home, step)
        self.ovf = [0] * buckets
        self.where = {}
        self.rnd = rnd
        self.linear = linear
        self.name = "buckets-linear" if linear else "buckets-double"
        self.max_passed = 0
        self.walk_insert = 0
        self.walk_remove = 0

    def insert(self, key):
        home = self.rnd.randrange(self.n)
        step = 1 if self.linear else 1 + self.rnd.randrange(self.n - 1)
        b, passed = home, 0
        while len(self.b[b]) >= 7:
            self.walk_insert += 1
            self.ovf[b] += 1
            b = (b + step) % self.n
            passed += 1
        self.walk_insert += 1
        self.b[b].append((key, home, step))
        self.where[key] = b
        self.max_passed = max(self.max_passed, passed)

    def _unpass(self, e, upto):
        x = e[1]
        while x != upto:
            self.ovf[x] -= 1
            x = (x + e[2]) % self.n

    def remove(self, key):
        b = self.where.pop(key)
        e = next(e for e in self.b[b] if e[0] == key)
        self.b[b].remove(e)
        self._unpass(e, b)
        self.walk_remove += 1
        hole = b
        while self.linear and self.ovf[hole] > 0:
            c = (hole + 1) % self.n
            while True:
                self.walk_remove += 1
                f = next((e for e in self.b[c] if (hole - e[1]) % self.n < (c - e[1]) % self.n), None)
                if f is not None:
                    break
                c = (c + 1) % self.n
            self.b[c].remove(f)
            self.b[hole].append(f)
            self.where[f[0]] = hole
            self.moved(f, hole)
            x = hole
            while x != c:
                self.ovf[x] -= 1
                x = (x + 1) % self.n
            hole = c

    def moved(self, e, to):
        """A removal pulled key `e` back into bucket `to`."""

    def probe_lines(self, home, key=None, step=None):
        step = step or (1 if self.linear else 1 + self.rnd.randrange(self.n - 1))
        b, lines = home, 1
        while not (key is not None and any(e[0] == key for e in self.b[b])) and self.ovf[b] > 0:
            b = (b + step) % self.n
            lines += 1
        return lines

    def capacity(self):
        return self.n * 7

    def hits(self):
        """Lines each present key's probe reads, and the share of keys in their home bucket."""
        keys = [(e[0], e[1], b, e[2]) for b, es in enumerate(self.b) for e in es]
        lines = [self.probe_lines(home, key, step) for key, home, _, step in keys]
        return lines, sum(1 for _, home, b, _ in keys if b == home) / len(keys)

    def miss_lines(self):
        return self.probe_lines(self.rnd.randrange(self.n))


class BucketsHome(Buckets):
    """buckets-linear, and each bucket also counts its own home's keys that sit in a later
    bucket ("away"): a probe stops once it has seen that many keys of its home, so a miss whose
    home has none away reads one line. (The counts need room in the control word: in a real
    table, two 4-bit counts in its last byte, or six slots a bucket.)"""

    def __init__(self, buckets, rnd):
        super().__init__(buckets, rnd, True)
        self.name = "buckets-home"
        self.away = [0] * self.n

    def insert(self, key):
        super().insert(key)
        b = self.where[key]
        home = next(e[1] for e in self.b[b] if e[0] == key)
        if b != home:
            self.away[home] += 1

    def remove(self, key):
        b = self.where[key]
        home = next(e[1] for e in self.b[b] if e[0] == key)
        if b != home:
            self.away[home] -= 1
        super().remove(key)

    def moved(self, e, to):
        if to == e[1]:
            self.away[e[1]] -= 1

    def probe_lines(self, home, key=None, step=None):
        b, lines, seen = home, 1, 0
        while True:
            if key is not None and any(e[0] == key for e in self.b[b]):
                return lines
            if b != home:
                seen += sum(1 for e in self.b[b] if e[1] == home)
            if seen >= self.away[home]:
                return lines
            b = (b + 1) % self.n
            lines += 1


def run(table, n, churn, rnd):
    for k in range(n):
        table.insert(k)
    live = list(range(n))
    next_key = n
    table.walk_insert = table.walk_remove = 0
    rounds = n * churn
    for _ in range(rounds):
        j = rnd.randrange(len(live))
        table.remove(live[j])
        table.insert(next_key)
        live[j] = next_key
        next_key += 1
    hits, in_home = table.hits()
    misses = [table.miss_lines() for _ in range(20000)]
    per = max(1, rounds)
    print(f"{table.name:15} churn {churn}: lines per hit {sum(hits) / len(hits):.2f}, per miss "
          f"{sum(misses) / len(misses):.2f}; in home line {in_home:.2f}; most passed {table.max_passed}; "
          f"walk per insert {table.walk_insert / per:.1f}, per removal {table.walk_remove / per:.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--load", type=float, default=0.8, help="keys per slot (7 slots a bucket, 8 words a line for rh)")
    p.add_argument("--buckets", type=int, default=2791, help="lines in the table (a 1M-entry cache's shard)")
    p.add_argument("--churn", type=int, nargs="+", default=[0, 1, 3])
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    for churn in a.churn:
        for make in (lambda r: RobinHood(a.buckets, r), lambda r: Buckets(a.buckets, r, False),
                     lambda r: Buckets(a.buckets, r, True), lambda r: BucketsHome(a.buckets, r)):
            rnd = random.Random(a.seed)
            table = make(rnd)
            run(table, int(table.capacity() * a.load), churn, rnd)


if __name__ == "__main__":
    main()
