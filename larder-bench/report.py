#!/usr/bin/env python3
"""Writes docs/benchmarks.md and its SVG charts (docs/img/) from larder-bench's results.

Reads, from the results directory (default larder-bench/results):
  *.json        JMH result files (-rf json) written by bench.sh
  memory.json   the memory probe's output
  peers.jsonl   which peers start on this JVM, with their flags (bench.sh)
  run-info.json date, command, machine and JDK of the run (bench.sh)
  sidebyside-*.json  SideBySideProbe's rounds: caches in one JVM, slices of each in turn

Standard library only:  python3 larder-bench/report.py [--results DIR] [--out FILE]
"""

import argparse
import glob
import html
import json
import math
import os
import re
import sys

CACHES = ["larder", "caffeine", "ohc", "chronicle", "ehcache", "mapdb", "cache2k"]
OFF_HEAP = {"ohc", "chronicle", "ehcache", "mapdb"}
NAMES = {
    "larder": "Larder",
    "caffeine": "Caffeine",
    "ohc": "OHC",
    "chronicle": "Chronicle Map",
    "ehcache": "Ehcache 3 (off-heap)",
    "mapdb": "MapDB 3 (direct)",
    "cache2k": "cache2k",
}
COLORS = {
    "larder": "#d62728",
    "caffeine": "#1f77b4",
    "ohc": "#ff7f0e",
    "chronicle": "#9467bd",
    "ehcache": "#2ca02c",
    "mapdb": "#8c564b",
    "cache2k": "#17becf",
}
OPS = [
    ("get", "GET (hit, copy out)"),
    ("putOverwrite", "PUT overwrite (key present)"),
    ("putInsert", "PUT insert (new key, evicting)"),
]
PCTS = [("50.0", "p50"), ("90.0", "p90"), ("99.0", "p99"), ("99.9", "p99.9")]
ZERO_ALLOC = 0.5  # B/op below this counts as no allocation (JMH's accounting noise)


# ----------------------------------------------------------------------------- loading


def load_records(results):
    recs = []
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        name = os.path.basename(path)
        if name in ("memory.json", "run-info.json"):
            continue
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"skipping {path}: {e}", file=sys.stderr)
            continue
        for r in data if isinstance(data, list) else []:
            cls, _, method = r["benchmark"].rpartition(".")
            pm = r["primaryMetric"]
            sec = r.get("secondaryMetrics", {})
            params = r.get("params", {})
            if params.get("keyInstances", "same") != "same":
                continue  # the tables compare the default runs; `equal` is run by hand (GetPutBenchmark)
            recs.append(
                {
                    "cls": cls.rpartition(".")[2],
                    "method": method,
                    "mode": r["mode"],
                    "threads": r["threads"],
                    "cache": params.get("cache", "larder"),
                    "size": int(params["size"]) if "size" in params else None,
                    "params": params,
                    "score": pm["score"],
                    "error": pm.get("scoreError"),
                    "unit": pm["scoreUnit"],
                    "pct": pm.get("scorePercentiles", {}),
                    "alloc": sec.get("gc.alloc.rate.norm", {}).get("score"),
                    "hits": sec.get("hits", {}).get("score"),
                    "misses": sec.get("misses", {}).get("score"),
                    "jdk": r.get("jdkVersion"),
                    "vm": f'{r.get("vmName", "")} {r.get("vmVersion", "")}'.strip(),
                    "jmh": r.get("jmhVersion"),
                    "jvmArgs": r.get("jvmArgs", []),
                    "warmup": f'{r.get("warmupIterations")} × {r.get("warmupTime")}',
                    "measure": f'{r.get("measurementIterations")} × {r.get("measurementTime")}',
                    "forks": r.get("forks"),
                }
            )
    return merge_rounds(recs)


def merge_rounds(recs):
    """One record per benchmark, mode and parameters: the median of its rounds (bench.sh ROUNDS).

    A round is one fork of every cache in turn; the median of three shrugs off one round that
    fell in a slow minute of the machine, where a mean would carry it into the table.
    """
    groups = {}
    for r in recs:
        key = (r["cls"], r["method"], r["mode"], r["threads"], json.dumps(r["params"], sort_keys=True))
        groups.setdefault(key, []).append(r)
    merged = []
    for rounds in groups.values():
        first = dict(rounds[0])
        first["rounds"] = len(rounds)
        first["roundScores"] = [x["score"] for x in rounds]  # in round order: round i of two caches ran minutes apart
        if len(rounds) > 1:
            first["score"] = median([x["score"] for x in rounds])
            first["error"] = None  # JMH's error bar is one round's; the spread is roundScores
            for k in ("alloc", "hits", "misses"):
                vals = [x[k] for x in rounds if x[k] is not None]
                first[k] = median(vals) if vals else None
            keys = set().union(*(x["pct"].keys() for x in rounds))
            first["pct"] = {
                k: median([x["pct"][k] for x in rounds if k in x["pct"]]) for k in keys
            }
        merged.append(first)
    return merged


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def compact(results):
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        if os.path.basename(path) in ("memory.json", "run-info.json"):
            continue
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(data, list):
            continue
        for r in data:
            for metric in [r.get("primaryMetric", {})] + list(r.get("secondaryMetrics", {}).values()):
                metric.pop("rawData", None)
                metric.pop("rawDataHistogram", None)
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_peers(results):
    peers = {}
    try:
        with open(os.path.join(results, "peers.jsonl")) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    p = json.loads(line)
                    peers[p["cache"]] = p
    except OSError:
        pass
    return peers


def value_size(recs, info):
    """The values' size of the GET/PUT and zero-copy runs (bench.sh's VALUE_BYTES): one per page."""
    sizes = {int(r["params"]["valueSize"]) for r in recs if "valueSize" in r["params"]}
    if len(sizes) > 1:
        sys.exit(f"report.py: the results mix value sizes {sorted(sizes)}; give each size its own OUT and DOC")
    return sizes.pop() if sizes else int(info.get("valueBytes", 256))


def array_bytes(n):
    """The heap bytes of a byte[n]: a 16-byte header, the length rounded up to 8."""
    return 16 + (n + 7) // 8 * 8


def find(recs, **kw):
    out = [r for r in recs if all(r.get(k) == v for k, v in kw.items())]
    return out[0] if out else None


# ----------------------------------------------------------------------------- formatting


def fmt_ns(v):
    if v is None:
        return "—"
    if v >= 100_000:
        return f"{v / 1000:,.0f} µs"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}"


def fmt_bytes(v):
    if v is None:
        return "—"
    return "0" if abs(v) < ZERO_ALLOC else f"{v:,.0f}"


def fmt_size(n):
    n = int(n)
    for unit, div in (("M", 1_000_000), ("K", 1_000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def mib(b):
    return f"{b / (1 << 20):,.1f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# Exceptions a run is expected to log: a map that does not evict cannot run the insert scenario.
EXPECTED_FAILURES = ("does not evict",)


def failed_runs(results_dir):
    """(log file, exception line) for every exception in the benchmark logs, expected ones aside."""
    logs = os.path.join(results_dir, "logs")
    if not os.path.isdir(logs):
        return []
    found = []
    for name in sorted(os.listdir(logs)):
        if not name.endswith(".log") or name.startswith("peer-"):
            continue
        with open(os.path.join(logs, name), errors="replace") as f:
            for line in f:
                line = line.strip()
                m = re.match(r"^([\w.$]+(?:Exception|Error)): (.*)$", line)
                if m and not any(e in line for e in EXPECTED_FAILURES):
                    found.append((name, line))
    return found


def missing_reason(cache, method, peers, log_hint=""):
    p = peers.get(cache)
    if p is not None and not p.get("ok", True):
        return "failed¹"
    if cache == "chronicle" and method in ("putInsert", "readThrough"):
        return "n/a²"
    return "—" + log_hint


# ----------------------------------------------------------------------------- charts


def nice_ticks(top, log):
    if log:
        ticks, v = [], 1.0
        while v <= top * 1.0001:
            ticks.append(v)
            v *= 10
        return ticks
    if top <= 0:
        return [0, 1]
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=mag * 10)
    return [i * step for i in range(0, int(math.ceil(top / step)) + 1)]


def bar_chart(path, title, groups, series, values, y_label, log=False):
    """groups: labels; series: cache ids; values[g][s]: number or None."""
    w, h = 860, 380
    left, right, top, bottom = 70, 170, 40, 50
    pw, ph = w - left - right, h - top - bottom
    present = [v for row in values for v in row if v is not None and v > 0]
    if not present:
        return False
    vmax = max(present)
    if log:
        lo = 10 ** math.floor(math.log10(min(present)))
        hi = 10 ** math.ceil(math.log10(vmax))
        ticks = nice_ticks(hi / lo, True)
        ticks = [t * lo for t in ticks]

        def y(v):
            return top + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    else:
        ticks = nice_ticks(vmax * 1.05, False)
        hi = ticks[-1]

        def y(v):
            return top + ph - ph * v / hi

    s = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">{html.escape(title)}</text>',
    ]
    for t in ticks:
        ty = y(t)
        s.append(f'<line x1="{left}" x2="{left + pw}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#ddd"/>')
        label = f"{t:,.0f}" if t >= 1 else f"{t:g}"
        s.append(f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end" fill="#444">{label}</text>')
    s.append(
        f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#444">'
        f"{html.escape(y_label)}</text>"
    )
    gw = pw / max(1, len(groups))
    bw = gw * 0.8 / max(1, len(series))
    for gi, g in enumerate(groups):
        gx = left + gi * gw + gw * 0.1
        for si, c in enumerate(series):
            v = values[gi][si]
            x = gx + si * bw
            if v is None or v <= 0:
                s.append(f'<text x="{x + bw / 2:.1f}" y="{top + ph - 4}" text-anchor="middle" font-size="9" fill="#999">×</text>')
                continue
            yy = y(v)
            s.append(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{bw * 0.92:.1f}" height="{top + ph - yy:.1f}" '
                f'fill="{COLORS.get(c, "#777")}"><title>{html.escape(NAMES.get(c, c))}: {v:,.1f}</title></rect>'
            )
        s.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{top + ph + 18}" text-anchor="middle">{html.escape(g)}</text>')
    s.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#444"/>')
    for si, c in enumerate(series):
        ly = top + 10 + si * 20
        s.append(f'<rect x="{left + pw + 20}" y="{ly - 10}" width="12" height="12" fill="{COLORS.get(c, "#777")}"/>')
        s.append(f'<text x="{left + pw + 38}" y="{ly}">{html.escape(NAMES.get(c, c))}</text>')
    s.append(
        f'<text x="{left}" y="{h - 12}" fill="#666" font-size="11">× = no result (failed or not applicable)'
        + ("; log scale" if log else "")
        + "</text>"
    )
    s.append("</svg>")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")
    return True


# ----------------------------------------------------------------------------- report


DEFAULT_RESULTS = "larder-bench/results"
DEFAULT_OUT = "docs/benchmarks.md"


def other_pages(out):
    """The other generated benchmark pages beside `out` (docs/benchmarks-*.md), sorted."""
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        return []
    me = os.path.basename(out)
    return sorted(
        os.path.join(d, f)
        for f in os.listdir(d)
        if f.startswith("benchmarks") and f.endswith(".md") and f != me
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=DEFAULT_RESULTS)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument(
        "--compact",
        action="store_true",
        help="first strip JMH's raw samples (rawData, rawDataHistogram) from the result files, in place, "
        "so they are small enough to commit; scores, errors, percentiles and counters stay",
    )
    args = ap.parse_args()
    if args.compact:
        compact(args.results)

    recs = load_records(args.results)
    memory = load_json(os.path.join(args.results, "memory.json"), {})
    info = load_json(os.path.join(args.results, "run-info.json"), {})
    peers = load_peers(args.results)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    # The default page's charts in img/, another page's in img/<its name>/, so no page draws over another's.
    stem = os.path.splitext(os.path.basename(args.out))[0]
    img_rel = "img" if stem == os.path.splitext(os.path.basename(DEFAULT_OUT))[0] else f"img/{stem}"
    img_dir = os.path.join(out_dir, img_rel)

    getput = [r for r in recs if r["cls"] == "GetPutBenchmark"]
    zc = [r for r in recs if r["cls"] == "LarderZeroCopyBenchmark"]
    rt = [r for r in recs if r["cls"] == "ReadThroughBenchmark"]
    sizes = sorted({r["size"] for r in getput if r["size"]})
    threads = sorted({r["threads"] for r in getput})
    caches = [c for c in CACHES if c in {r["cache"] for r in getput} or c in peers] or CACHES
    any_rec = recs[0] if recs else {}
    value_bytes = value_size(getput + zc, info)

    L = []
    L.append("# Benchmarks")
    L.append("")
    L.append(
        "Larder against its peers: GET/PUT latency, allocation, the read-through scenarios and memory per entry. "
        "Generated by `larder-bench/report.py` from the JMH and memory-probe results in "
        f"`{args.results}`; do not edit by hand."
    )
    L.append("")
    L.append("## This run")
    L.append("")
    L.append(f"- **Date:** {info.get('date', 'unknown')} (commit `{info.get('commit', '?')}`)")
    mem_gib = f", {info['memTotalKb'] / (1 << 20):.0f} GiB RAM" if info.get("memTotalKb") else ""
    thp = f", transparent huge pages `{info['thp']}`" if info.get("thp") else ""
    # Family and model tell apart guests that report the same name (an "AMD EPYC" is Zen 1 to 4).
    cpu_id = f" ({info['cpuId']})" if info.get("cpuId") else ""
    L.append(f"- **Machine:** {info.get('nproc', '?')} cores (`nproc`), CPU `{info.get('cpu', '?')}`{cpu_id}{mem_gib}{thp}")
    L.append(f"- **Entries:** 16-byte `String` keys, {value_bytes}-byte values (GET/PUT and zero-copy GET)")
    L.append(
        f"- **JDK:** {any_rec.get('jdk') or '?'} ({any_rec.get('vm') or info.get('java', '?')}); "
        f"JMH {any_rec.get('jmh') or '?'}"
    )
    if getput:
        L.append(
            f"- **JMH settings:** {any_rec.get('forks')} fork, warmup {getput[0]['warmup']}, "
            f"measurement {getput[0]['measure']}; modes {info.get('modes', '?')}; profiler `{info.get('prof', '')}`; "
            f"threads {', '.join(str(t) for t in threads)}"
        )
        rounds = max(r["rounds"] for r in getput)
        if rounds > 1:
            L.append(
                f"- **Rounds:** GET/PUT ran {rounds} times over, every cache in turn for one operation, size and "
                f"thread count, so the caches a row compares ran minutes apart at most; a cell is the median of "
                f"the rounds that ran it (round 1: modes {info.get('modes', '?')}; later rounds: modes "
                f"{info.get('laterModes', '?')}, caches {info.get('laterCaches', 'all')})"
            )
    L.append("")
    L.append("Exact command of this run (every setting spelled out), from the repository root:")
    L.append("")
    L.append("```sh")
    L.append(info.get("command", "larder-bench/bench.sh"))
    L.append("```")
    L.append("")
    L.append("Regenerate this page from the results on disk (no benchmark runs):")
    L.append("")
    L.append("```sh")
    regenerate = "python3 larder-bench/report.py"
    if (args.results, args.out) != (DEFAULT_RESULTS, DEFAULT_OUT):
        regenerate += f" --results {args.results} --out {args.out}"
    L.append(regenerate)
    L.append("```")
    L.append("")
    others = other_pages(args.out)
    if others:
        L.append(
            "Other runs, with their own results directories: "
            + ", ".join(f"[`{os.path.basename(o)}`]({os.path.basename(o)})" for o in others)
            + "."
        )
        L.append("")
    L.append(
        "Full run with the defaults (3 warmups × 2 s, 5 iterations × 2 s, AverageTime and SampleTime, `-prof gc`, "
        "1 thread and all cores, read-through on 1, 2 and 4 threads, memory probe at 1M and 10M, every GET/PUT row "
        "again with Larder, OHC and Chronicle Map side by side in one JVM): "
        "`larder-bench/bench.sh`. Add `SIZES='10000 100000 1000000 10000000'` where memory allows (the forks get a "
        "14 GiB heap at 10M). Settings are environment variables; see the top of `larder-bench/bench.sh`."
    )
    L.append("")
    L.append(
        "> **Read the numbers with care.** The machine is shared with other jobs, and a bounded run uses short "
        "iterations: treat differences under ~30 % as noise. The JSON behind every table is committed next to the "
        "harness, with JMH's error bars. Warm-ups shorter than ~3 s time Larder's JIT: from a fresh JVM its inserts "
        "reach their steady speed after ~2.5 s at 10K entries and ~3.5 s at 1M on a 2-core machine, OHC's within "
        "~0.5 s (`WarmUpProbe`; the curves are in [`docs/speed-work.md`](speed-work.md), forty-sixth session)."
    )
    L.append("")
    L.append(
        "What was changed in the engine to get these numbers, what each change measured, and what is left: "
        "[`docs/speed-work.md`](speed-work.md) (written by hand)."
    )
    L.append("")

    # ---- peers
    L.append("## Caches compared")
    L.append("")
    rows = []
    for c in caches:
        p = peers.get(c, {})
        status = "ok" if p.get("ok") else (f"**failed¹**: {p.get('reason', '?')}" if p else "not run")
        flags = " ".join(f"`{f}`" for f in p.get("flags", [])) or "none"
        rows.append([NAMES[c], p.get("version", "?"), p.get("storage", "?"), flags, status])
    L.append(table(["cache", "version", "storage", "JVM flags it needs on JDK 25", "status on this JDK"], rows))
    L.append("")
    L.append(
        "Sizing: every cache is built to hold the benchmark's N entries. Larder gets "
        f"`maximumBytes(MemoryEstimator.estimate(N, 16, {value_bytes}).recommendedMaximumBytes())` (room for overwrites), `maximumEntries(N)` and `expectedEntries(N)`; Caffeine "
        "`maximumSize(N)` (and `initialCapacity(N)`); cache2k `entryCapacity(N)`; MapDB `expireMaxSize(N)` with "
        "create/update/get expiry queues (LRU); OHC a byte capacity of N × (key + value + 64) × 1.1 and a presized "
        "hash table; Ehcache an off-heap tier of N × (key + 8 + value + 64) × 1.1 bytes (at least 1 MiB); Chronicle "
        "Map `entries(N)` with the average key and value sizes. Each cache's forks run with only its own flags. "
        "Given native access, Larder asks the kernel for transparent huge pages for its pages, index tables and "
        "sketch (`madvise`; its default where native access is granted, see README); the other caches take the "
        "kernel's own setting, recorded under \"This run\" when the run recorded it."
    )
    L.append("")
    L.append(
        "¹ failed: the library does not start or work on this JDK even with the flags shown; the adapter stays "
        "and fails with that message. ² n/a: Chronicle Map is a map, not a cache; it never evicts, so inserting "
        "past its capacity and the read-through scenarios do not apply to it."
    )
    L.append("")

    # ---- failed forks: an exception in a benchmark's log is a finding, not a blank cell
    failures = failed_runs(args.results)
    if failures:
        L.append("## ❌ Benchmark runs that threw")
        L.append("")
        L.append(
            "A fork that throws leaves its cell empty (—); these are the exceptions in the run's logs "
            f"(`{args.results}/logs`), first line each. An exception from a cache is a bug to fix before "
            "its figures are trusted."
        )
        L.append("")
        L.extend(f"- `{name}`: `{line}`" for name, line in failures)
        L.append("")

    sbs = load_side_by_side(args.results)

    # ---- bar check
    L.append("## Against the bar")
    L.append("")
    L.extend(bar_checks(getput, zc, memory, sizes, threads))
    L.extend(side_by_side_bar(sbs))
    L.append("")

    L.extend(side_by_side_section(sbs))

    # ---- GET / PUT tables
    if getput:
        L.append("## GET and PUT: average time (ns/op)")
        L.append("")
        L.append(
            "AverageTime mode; lower is better. In brackets: the cache's time over Larder's (above 1.00× means "
            f"Larder is faster). 16-byte keys, {value_bytes}-byte values; the cache holds N entries; GET and PUT-overwrite pick "
            "uniformly random present keys; PUT-insert cycles through 64N fresh keys (at most 16M, at least 2N), so almost every put inserts a new key and evicts (a pool of 2N, used before 2026-11-24, is a loop of which Larder and Caffeine kept about half, so half of their \"inserts\" were overwrites; with this pool under 2% find their key present)."
        )
        L.append("")
        for op, title in OPS:
            for t in threads:
                L.append(f"### {title}, {t} thread{'s' if t > 1 else ''}")
                L.append("")
                rows = []
                for c in caches:
                    row = [NAMES[c]]
                    for s in sizes:
                        r = find(getput, method=op, mode="avgt", threads=t, cache=c, size=s)
                        base = find(getput, method=op, mode="avgt", threads=t, cache="larder", size=s)
                        if r is None:
                            row.append(missing_reason(c, op, peers))
                        elif c == "larder" or base is None:
                            row.append(f"**{fmt_ns(r['score'])}**" if c == "larder" else fmt_ns(r["score"]))
                        else:
                            row.append(f"{fmt_ns(r['score'])} ({r['score'] / base['score']:.2f}×)")
                    rows.append(row)
                L.append(table(["cache"] + [f"N = {fmt_size(s)}" for s in sizes], rows))
                L.append("")
                chart = f"{op}-t{t}.svg"
                vals = [
                    [
                        (find(getput, method=op, mode="avgt", threads=t, cache=c, size=s) or {}).get("score")
                        for c in caches
                    ]
                    for s in sizes
                ]
                if bar_chart(
                    os.path.join(img_dir, chart),
                    f"{title}, {t} thread{'s' if t > 1 else ''}: ns/op (lower is better)",
                    [f"N = {fmt_size(s)}" for s in sizes],
                    caches,
                    vals,
                    "ns/op (log scale)",
                    log=True,
                ):
                    L.append(f"![{title}, {t} thread{'s' if t > 1 else ''}]({img_rel}/{chart})")
                    L.append("")

        # ---- percentiles
        if any(r["mode"] == "sample" for r in getput):
            L.append("## GET and PUT: latency percentiles (SampleTime, ns)")
            L.append("")
            for op, title in OPS:
                for t in threads:
                    rows = []
                    for s in sizes:
                        for c in caches:
                            r = find(getput, method=op, mode="sample", threads=t, cache=c, size=s)
                            if r is None:
                                continue
                            rows.append(
                                [fmt_size(s), NAMES[c]] + [fmt_ns(r["pct"].get(k)) for k, _ in PCTS] + [fmt_ns(r["score"])]
                            )
                    if not rows:
                        continue
                    hdr = f"{title}, {t} thread{'s' if t > 1 else ''}"
                    if t != threads[0]:
                        L.append(f"<details><summary>{hdr}</summary>")
                        L.append("")
                    else:
                        L.append(f"### {hdr}")
                        L.append("")
                    L.append(table(["N", "cache"] + [p for _, p in PCTS] + ["mean"], rows))
                    L.append("")
                    if t != threads[0]:
                        L.append("</details>")
                        L.append("")
            big = sizes[-1] if sizes else None
            vals = [
                [(find(getput, method="get", mode="sample", threads=threads[0], cache=c, size=big) or {}).get("pct", {}).get(k) for c in caches]
                for k, _ in PCTS
            ]
            chart = "get-percentiles.svg"
            if big and bar_chart(
                os.path.join(img_dir, chart),
                f"GET latency percentiles, N = {fmt_size(big)}, {threads[0]} thread: ns",
                [p for _, p in PCTS],
                caches,
                vals,
                "ns (log scale)",
                log=True,
            ):
                L.append(f"![GET percentiles]({img_rel}/{chart})")
                L.append("")

        # ---- allocation
        if any(r["alloc"] is not None for r in getput):
            L.append("## Allocation per operation (`-prof gc`, bytes/op)")
            L.append("")
            L.append(
                "`gc.alloc.rate.norm` from the AverageTime runs on 1 thread: bytes the operation allocates on the "
                f"Java heap (under {ZERO_ALLOC} B/op is shown as 0). A GET that copies a {value_bytes}-byte value out "
                f"allocates at least the {array_bytes(value_bytes)}-byte array."
            )
            L.append("")
            rows = []
            for c in caches:
                row = [NAMES[c]]
                for op, _ in OPS:
                    for s in sizes:
                        r = find(getput, method=op, mode="avgt", threads=threads[0], cache=c, size=s)
                        row.append(fmt_bytes(r["alloc"]) if r else missing_reason(c, op, peers))
                rows.append(row)
            hdr = ["cache"] + [f"{op} {fmt_size(s)}" for op, _ in OPS for s in sizes]
            L.append(table(hdr, rows))
            L.append("")

    # ---- zero copy
    if zc:
        L.append("## Larder zero-copy GET")
        L.append("")
        L.append(
            f"`read(key, seg -> seg.get(JAVA_BYTE, 0))` against `getIfPresent(key)` (which copies the {value_bytes}-byte value "
            "into a new array), on the same filled cache. AverageTime."
        )
        L.append("")
        zsizes = sorted({r["size"] for r in zc})
        zthreads = sorted({r["threads"] for r in zc})
        rows = []
        for t in zthreads:
            for s in zsizes:
                z = find(zc, method="readZeroCopy", mode="avgt", threads=t, size=s)
                g = find(zc, method="getCopy", mode="avgt", threads=t, size=s)
                rows.append(
                    [
                        t,
                        fmt_size(s),
                        fmt_ns(z and z["score"]),
                        fmt_bytes(z and z["alloc"]),
                        fmt_ns(g and g["score"]),
                        fmt_bytes(g and g["alloc"]),
                    ]
                )
        L.append(table(["threads", "N", "read ns/op", "read B/op", "getIfPresent ns/op", "getIfPresent B/op"], rows))
        L.append("")

    # ---- read-through
    if rt:
        L.append("## Read-through: Zipfian and uniform (worst case)")
        L.append("")
        r0 = rt[0]["params"]
        L.append(
            f"Each operation looks a key up; a miss burns `Blackhole.consumeCPU({r0.get('missPenaltyTokens')})` "
            "(the cost of loading) and puts the value. Keys are drawn online from a universe 10× the cache's "
            f"capacity: **zipf** (exponent {r0.get('zipfExponent')}) or **uniform**, where any cache that honours "
            "its size hits about 10 % of requests whatever its policy (more means it holds more than it was sized "
            "for). Time per operation (lower is better) and effective hit rate = hits / (hits + misses)."
        )
        L.append("")
        rsizes = sorted({r["size"] for r in rt})
        rthreads = sorted({r["threads"] for r in rt})
        for dist in ("zipf", "uniform"):
            for s in rsizes:
                rows = []
                for c in CACHES:
                    row = [NAMES[c]]
                    got = False
                    for t in rthreads:
                        r = [x for x in rt if x["cache"] == c and x["threads"] == t and x["size"] == s and x["params"].get("distribution") == dist]
                        if r:
                            r = r[0]
                            got = True
                            hits, misses = r["hits"] or 0, r["misses"] or 0
                            rate = hits / (hits + misses) if hits + misses else float("nan")
                            row.append(f"{fmt_ns(r['score'])} / {rate * 100:.1f} %")
                        else:
                            row.append(missing_reason(c, "readThrough", peers))
                    if got or c in peers:
                        rows.append(row)
                L.append(f"### {dist}, capacity {fmt_size(s)}, universe {fmt_size(s * 10)}: ns/op / hit rate")
                L.append("")
                L.append(table(["cache"] + [f"{t} thread{'s' if t > 1 else ''}" for t in rthreads], rows))
                L.append("")
        vals = []
        groups = []
        for dist in ("zipf", "uniform"):
            for t in rthreads:
                groups.append(f"{dist}, {t}t")
                row = []
                for c in caches:
                    r = [x for x in rt if x["cache"] == c and x["threads"] == t and x["size"] == rsizes[0] and x["params"].get("distribution") == dist]
                    if r and (r[0]["hits"] or 0) + (r[0]["misses"] or 0) > 0:
                        row.append(100.0 * r[0]["hits"] / (r[0]["hits"] + r[0]["misses"]))
                    else:
                        row.append(None)
                vals.append(row)
        if bar_chart(
            os.path.join(img_dir, "readthrough-hit-rate.svg"),
            f"Read-through hit rate, capacity {fmt_size(rsizes[0])} (higher is better)",
            groups,
            caches,
            vals,
            "hit rate %",
        ):
            L.append(f"![read-through hit rate]({img_rel}/readthrough-hit-rate.svg)")
            L.append("")

    # ---- memory
    mres = memory.get("results", []) if isinstance(memory, dict) else []
    if mres:
        L.append("## Memory per entry")
        L.append("")
        L.append(
            "`dev.larder.bench.MemoryProbe`: each cache in a JVM of its own (its flags only; G1; a fixed, "
            "pre-touched heap, so RSS growth is memory outside the heap), filled with N fresh 16-byte keys and "
            "values. **heap** = heap retained after a full GC, **RSS** = growth of the process's resident set "
            "(native memory, plus a few MiB of JIT code and GC structures), **B/entry** = (heap + RSS) / entries "
            "held, **overhead** = B/entry − key − value bytes, **GC** = collections and their time while filling, "
            "**1B** = B/entry × 10⁹. In brackets: B/entry over Larder's."
        )
        L.append("")
        configs = []
        for r in mres:
            k = (r.get("entries"), r.get("valueBytes"))
            if k not in configs:
                configs.append(k)
        chart_groups, chart_vals = [], []
        for n, v in configs:
            L.append(f"### N = {fmt_size(n)}, {v}-byte values")
            L.append("")
            base = next((r for r in mres if r.get("cache") == "larder" and r.get("entries") == n and r.get("valueBytes") == v and r.get("ok")), None)
            rows = []
            for c in CACHES:
                r = next((x for x in mres if x.get("cache") == c and x.get("entries") == n and x.get("valueBytes") == v), None)
                if r is None:
                    continue
                if not r.get("ok"):
                    rows.append([NAMES[c], f"failed: {r.get('reason', '?')}"] + [""] * 8)
                    continue
                bpe = r["bytesPerEntry"]
                ratio = f" ({bpe / base['bytesPerEntry']:.2f}×)" if base and c != "larder" else ""
                rows.append(
                    [
                        NAMES[c],
                        f"{r['entriesHeld']:,}",
                        mib(r["heapRetainedBytes"]),
                        mib(r["rssGrowthBytes"]),
                        f"**{bpe:,.0f}**" if c == "larder" else f"{bpe:,.0f}{ratio}",
                        f"{r['overheadPerEntry']:,.0f}",
                        f"{r['gcCountWhileFilling']} / {r['gcMillisWhileFilling']:,} ms",
                        f"{r['fillSeconds']:.1f}",
                        f"{r['projectedBytesFor1B'] / (1 << 30):,.0f} GiB",
                        mib(r["reportedBytes"]) if r.get("reportedBytes", -1) >= 0 else "—",
                    ]
                )
            L.append(
                table(
                    ["cache", "entries held", "heap MiB", "RSS MiB", "B/entry", "overhead B/entry", "GC while filling", "fill s", "1B entries", "self-reported MiB"],
                    rows,
                )
            )
            L.append("")
            chart_groups.append(f"{fmt_size(n)} × {v} B")
            chart_vals.append(
                [
                    next((x["bytesPerEntry"] for x in mres if x.get("cache") == c and x.get("entries") == n and x.get("valueBytes") == v and x.get("ok")), None)
                    for c in caches
                ]
            )
        mcaches = [c for c in CACHES if any(x.get("cache") == c for x in mres)]
        chart_vals = [[row[caches.index(c)] if c in caches else None for c in mcaches] for row in chart_vals]
        if bar_chart(
            os.path.join(img_dir, "memory-bytes-per-entry.svg"),
            "Memory per entry, bytes (lower is better)",
            chart_groups,
            mcaches,
            chart_vals,
            "bytes per entry",
        ):
            L.append(f"![bytes per entry]({img_rel}/memory-bytes-per-entry.svg)")
            L.append("")

    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")
    print(f"wrote {args.out} ({len(recs)} JMH results, {len(mres)} probe results)")


SBS_OPS = [("get", "GET (hit, copy out)"), ("overwrite", "PUT overwrite"), ("insert", "PUT insert")]


def load_side_by_side(results):
    """SideBySideProbe's runs, sorted by operation, threads and size."""
    runs = []
    for path in glob.glob(os.path.join(results, "sidebyside-*.json")):
        data = load_json(path, None)
        if isinstance(data, dict) and data.get("caches"):
            runs.append(data)
    order = {op: i for i, (op, _) in enumerate(SBS_OPS)}
    return sorted(runs, key=lambda d: (order.get(d.get("op"), 9), d.get("threads", 0), d.get("entries", 0)))


def sbs_row_name(d):
    return f"{dict(SBS_OPS).get(d['op'], d['op'])} N={fmt_size(d['entries'])} {d['threads']}t"


def sbs_verdict(r):
    """Larder ahead (+1), behind (-1) or neither (0) by a ratio (peer / Larder) and its interval."""
    return 1 if r["low"] > 1 else -1 if r["high"] < 1 else 0


def side_by_side_bar(sbs):
    """The bar's off-heap comparison again, from the side-by-side rounds (one line; none without them)."""
    pairs = [(d, c, r) for d in sbs for c, r in d.get("ratios", {}).items() if c in OFF_HEAP]
    if not pairs:
        return []
    ahead = sum(1 for _, _, r in pairs if sbs_verdict(r) > 0)
    behind = [f"{sbs_row_name(d)} vs {NAMES.get(c, c)} {r['median']:.2f}×" for d, c, r in pairs if sbs_verdict(r) < 0]
    even = [f"{sbs_row_name(d)} vs {NAMES.get(c, c)} {r['median']:.2f}×" for d, c, r in pairs if sbs_verdict(r) == 0]
    line = (
        f"- **Side by side in one JVM** (the same comparisons, each cache's slices alternating; a ratio counts when "
        f"its 90% interval excludes 1): Larder ahead in {ahead} of {len(pairs)}"
    )
    if behind:
        line += "; behind in " + ", ".join(behind)
    if even:
        line += "; not resolved in " + ", ".join(even)
    return [line + ". See [Side by side in one JVM](#side-by-side-in-one-jvm)."]


def side_by_side_section(sbs):
    if not sbs:
        return []
    first = sbs[0]
    L = ["## Side by side in one JVM", ""]
    L.append(
        "On the 2-core guests these pages were measured on, a fork's speed steps between two or three levels for "
        "seconds to tens of seconds at a time, for every cache alike, so forks minutes apart compare the levels "
        "they drew as much as the caches. Here the caches share one JVM (`SideBySideProbe`) and run the same "
        f"operation in slices of {first.get('sliceMs')} ms, each in turn (the order reversed every other round), "
        f"{first.get('rounds')} rounds after {first.get('warmupRounds')} of warm-up: a round's caches ran within a "
        "second or two of each other. A cell: the cache's median ns/op over the rounds and, for a peer, the median "
        "of the rounds' ratios peer / Larder (above 1.00× means Larder is faster) with its 90% bootstrap interval. "
        "One JVM for all has a cost for Larder that a fork does not: its background eviction's state (the "
        "executor, the hand-off's trials) starts over after each other cache's slice."
    )
    L.append("")
    peers = []
    for d in sbs:
        for c in d["caches"]:
            if c != d.get("reference") and c not in peers:
                peers.append(c)
    rows = []
    for d in sbs:
        ref = d.get("reference", "larder")
        row = [sbs_row_name(d), f"**{fmt_ns(d['caches'][ref]['median'])}**"]
        for c in peers:
            r = d.get("ratios", {}).get(c)
            if r is None:
                row.append("n/a")
            else:
                mark = "" if sbs_verdict(r) > 0 else " ❌" if sbs_verdict(r) < 0 else " ~"
                row.append(
                    f"{fmt_ns(d['caches'][c]['median'])} ({r['median']:.2f}× [{r['low']:.2f}, {r['high']:.2f}]){mark}"
                )
        rows.append(row)
    L.append(table(["operation", NAMES.get(first.get("reference", "larder"), "Larder")] + [NAMES.get(c, c) for c in peers], rows))
    L.append("")
    L.append("❌: the peer is faster (its interval is below 1); ~: no difference resolved; n/a: not run (Chronicle Map does not evict, so it has no inserts).")
    L.append("")
    return L


def bar_checks(getput, zc, memory, sizes, threads):
    """Lines saying, with numbers, where Larder meets the product's bar and where it falls short."""
    out = []
    if not getput:
        return ["No GET/PUT results."]

    def score(op, c, s, t):
        r = find(getput, method=op, mode="avgt", threads=t, cache=c, size=s)
        return r["score"] if r else None

    def percentile(op, c, s, t, q):
        r = find(getput, method=op, mode="sample", threads=t, cache=c, size=s)
        return r["pct"].get(q) if r else None

    def p50(op, c, s, t):
        return percentile(op, c, s, t, "50.0")

    def p50_note(op, other, s, t):
        l, o = p50(op, "larder", s, t), p50(op, other, s, t)
        return f" (p50 {l / o:.2f}×)" if l and o else ""

    def mark(ok):
        return "➖ (no data)" if ok is None else ("✅" if ok else "❌")

    # 1. faster than every off-heap peer
    misses = []
    total = 0
    for op, _ in OPS:
        for t in threads:
            for s in sizes:
                l = score(op, "larder", s, t)
                if l is None:
                    continue
                for c in sorted(OFF_HEAP):
                    p = score(op, c, s, t)
                    if p is None:
                        continue
                    total += 1
                    if not l < p:
                        misses.append(f"{op} N={fmt_size(s)} {t}t: {NAMES[c]} {fmt_ns(p)} vs Larder {fmt_ns(l)}")
    p50_total = p50_won = 0
    for op, _ in OPS:
        for t in threads:
            for s in sizes:
                l = p50(op, "larder", s, t)
                for c in sorted(OFF_HEAP):
                    o = p50(op, c, s, t)
                    if l and o:
                        p50_total += 1
                        p50_won += l < o
    if p50_total:
        out.append(
            f"- By SampleTime medians, which shrug off interference from other jobs better than means: Larder's p50 "
            f"beats an off-heap peer's in {p50_won} of {p50_total} comparisons."
        )
    paired = [  # (op, size, threads, peer, Larder's rounds won, rounds)
        (op, s, t, c, sum(a < b for a, b in zip(lr["roundScores"], pr["roundScores"])), len(lr["roundScores"]))
        for op, _ in OPS
        for t in threads
        for s in sizes
        for c in sorted(OFF_HEAP)
        for lr in [find(getput, method=op, mode="avgt", threads=t, cache="larder", size=s)]
        for pr in [find(getput, method=op, mode="avgt", threads=t, cache=c, size=s)]
        if lr and pr and min(lr["rounds"], pr["rounds"]) > 1
    ]
    if paired:
        split = [f"{op} N={fmt_size(s)} {t}t vs {NAMES[c]} {w} of {n}" for op, s, t, c, w, n in paired if 0 < w < n]
        out.append(
            f"- Round by round (each round's forks of Larder and the peer ran minutes apart): Larder won every round "
            f"in {sum(w == n for *_, w, n in paired)} of {len(paired)} comparisons and none in "
            f"{sum(w == 0 for *_, w, n in paired)}."
            + ("" if not split else " Split: " + "; ".join(split) + ".")
        )
    out.insert(
        0,
        f"- {mark(not misses if total else None)} **Faster than every off-heap peer** (GET, PUT overwrite, PUT insert; every size and "
        f"thread count): {total - len(misses)} of {total} comparisons won."
        + ("" if not misses else " Lost: " + "; ".join(misses) + "."),
    )
    # 2. GET vs Caffeine
    for limit, only, label in ((1.5, None, "GET ≤ 1.5× Caffeine"), (1.0, 1_000_000, "GET ≤ 1.0× Caffeine at 1M")):
        cells, bad = [], False
        for t in threads:
            for s in sizes:
                if only and s != only:
                    continue
                l, c = score("get", "larder", s, t), score("get", "caffeine", s, t)
                if l is None or c is None:
                    continue
                ratio = l / c
                bad |= ratio > limit
                cells.append(f"N={fmt_size(s)} {t}t {ratio:.2f}×{p50_note('get', 'caffeine', s, t)}")
        out.append(f"- {mark(not bad if cells else None)} **{label}** (Larder / Caffeine, AverageTime; SampleTime p50 in brackets): " + (", ".join(cells) or "no data") + ".")
    # 3. PUT vs Caffeine
    for op in ("putOverwrite", "putInsert"):
        cells, bad = [], False
        for t in threads:
            for s in sizes:
                l, c = score(op, "larder", s, t), score(op, "caffeine", s, t)
                if l is None or c is None:
                    continue
                ratio = l / c
                bad |= ratio > 1.0
                cells.append(f"N={fmt_size(s)} {t}t {ratio:.2f}×{p50_note(op, 'caffeine', s, t)}")
        out.append(f"- {mark(not bad if cells else None)} **{op} ≤ 1.0× Caffeine** (Larder / Caffeine, AverageTime; p50 in brackets): " + (", ".join(cells) or "no data") + ".")
    # 4. tail latency vs Caffeine at 100K and above
    cells, lost = [], []
    for op in ("get", "putOverwrite", "putInsert"):
        for t in threads:
            for s in sizes:
                if s < 100_000:
                    continue
                l, c = percentile(op, "larder", s, t, "99.9"), percentile(op, "caffeine", s, t, "99.9")
                if l is None or c is None:
                    continue
                cell = f"{op} N={fmt_size(s)} {t}t {fmt_ns(l)} vs {fmt_ns(c)}"
                cells.append(cell)
                if not l < c:
                    lost.append(cell)
    out.append(
        f"- {mark(not lost if cells else None)} **p99.9 below Caffeine's at 100K and 1M** (Larder vs Caffeine, SampleTime, "
        f"ns unless marked µs): {len(cells) - len(lost)} of {len(cells)} below."
        + (" Not below: " + ", ".join(lost) + "." if lost else "")
        + (" All: " + ", ".join(cells) + "." if cells else " No SampleTime data.")
        + " A short run's p99.9 rests on its slowest 0.1% of samples, mostly the machine's hiccups, not the cache's."
    )
    # 5. allocation
    cells, bad = [], False
    for op in ("putOverwrite", "putInsert"):
        for s in sizes:
            r = find(getput, method=op, mode="avgt", threads=threads[0], cache="larder", size=s)
            if r and r["alloc"] is not None:
                bad |= r["alloc"] >= ZERO_ALLOC
                cells.append(f"{op} N={fmt_size(s)} {fmt_bytes(r['alloc'])} B")
    for s in sizes:
        r = find(zc, method="readZeroCopy", mode="avgt", threads=threads[0], size=s)
        if r and r["alloc"] is not None:
            bad |= r["alloc"] >= ZERO_ALLOC
            cells.append(f"zero-copy GET N={fmt_size(s)} {fmt_bytes(r['alloc'])} B")
    out.append(f"- {mark(not bad if cells else None)} **0 bytes allocated per PUT and per zero-copy GET**: " + (", ".join(cells) or "no data (run with -prof gc)") + ".")
    # 6. memory
    mres = memory.get("results", []) if isinstance(memory, dict) else []
    cells, bad = [], False
    configs = sorted({(r.get("entries"), r.get("valueBytes")) for r in mres})
    for n, v in configs:
        ok = [r for r in mres if r.get("entries") == n and r.get("valueBytes") == v and r.get("ok")]
        l = next((r for r in ok if r["cache"] == "larder"), None)
        if not l or len(ok) < 2:
            continue
        best = min(ok, key=lambda r: r["bytesPerEntry"])
        bad |= best["cache"] != "larder"
        cells.append(
            f"N={fmt_size(n)}×{v} B: Larder {l['bytesPerEntry']:,.0f}"
            + ("" if best["cache"] == "larder" else f", {NAMES[best['cache']]} {best['bytesPerEntry']:,.0f}")
        )
    out.append(f"- {mark(not bad if cells else None)} **Fewest bytes per entry**: " + ("; ".join(cells) or "no probe data") + ".")
    held = []
    for r in mres:
        if r.get("cache") == "larder" and r.get("ok") and r["entriesHeld"] < r["entries"]:
            held.append(f"{r['entriesHeld']:,} of {r['entries']:,} ({v_str(r)})")
    if held:
        out.append(
            "- ⚠️ Sized with `MemoryEstimator.estimate(N, 16, V)`, Larder held fewer entries than N: "
            + "; ".join(held)
            + ". Bytes per entry are per entry held."
        )
    return out


def v_str(r):
    return f"{r.get('valueBytes')}-byte values"


if __name__ == "__main__":
    main()
