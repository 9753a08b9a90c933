#!/usr/bin/env python3
"""Chart and tables from criterion's results of `cargo bench --bench response`.

    python3 scripts/bench_chart.py                      # docs/response-time.svg + tables
    python3 scripts/bench_chart.py --group streaming --out docs/streaming-time.svg

Reads every `target/criterion/**/new/benchmark.json` with its `estimates.json` (median
point estimate, in ns), then:

- writes an SVG of time per response by size (grouped bars, log time axis) for one group
  family (default `response`): tower_gzip, tower_http, raw_floor, identity;
- prints markdown tables of the medians and the ratios tower_gzip/tower_http and
  tower_gzip/raw_floor for every group found (response, response_l1, streaming, request,
  contention), then the issue's targets with PASS/FAIL.

Python 3 standard library only.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict

FUNCTIONS = ["tower_gzip", "tower_http", "raw_floor", "identity"]
COLORS = {
    "tower_gzip": "#1f77b4",
    "tower_http": "#ff7f0e",
    "raw_floor": "#2ca02c",
    "identity": "#7f7f7f",
}
LABELS = {
    "tower_gzip": "tower-gzip",
    "tower_http": "tower-http 0.7",
    "raw_floor": "raw codec floor",
    "identity": "identity (no compression)",
}
FAMILIES = ["response", "response_l1", "streaming", "request", "contention"]
SIZE_ORDER = {"1KiB": 0, "16KiB": 1, "64KiB": 2, "256KiB": 3, "1MiB": 4}
TITLES = {
    "response": "Full<Bytes> JSON response, gzip level 6",
    "response_l1": "Full<Bytes> JSON response, gzip level 1",
    "streaming": "streamed JSON response (16 KiB frames), gzip level 6",
    "request": "gzip request body decompression",
}


def load(root):
    """{group_id: {function: median_ns}}; `contention` results are keyed by value_str."""
    results = defaultdict(dict)
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        try:
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                bench = json.load(f)
            with open(os.path.join(dirpath, "estimates.json")) as f:
                median = json.load(f)["median"]["point_estimate"]
        except (OSError, KeyError, ValueError):
            continue
        group, function = bench["group_id"], bench["function_id"]
        if bench.get("value_str"):
            results[group][f"{function}/{bench['value_str']}"] = median
        else:
            results[group][function] = median
    return results


def fmt_time(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}"


def family_groups(results, family):
    """[(size_label, {function: ns})] for groups `family/<size>`, by size."""
    out = []
    for group, funcs in results.items():
        head, _, size = group.partition("/")
        if head == family and size:
            out.append((size, funcs))
    out.sort(key=lambda x: (SIZE_ORDER.get(x[0], 99), x[0]))
    return out


def tables(results):
    lines = []
    lines.append(
        "| group | tower_gzip | tower_http | raw_floor | identity "
        "| tower_gzip/tower_http | tower_gzip/raw_floor |"
    )
    lines.append("|---|--:|--:|--:|--:|--:|--:|")
    for family in FAMILIES[:-1]:
        for size, funcs in family_groups(results, family):
            g, h, r, i = (funcs.get(f) for f in FUNCTIONS)
            lines.append(
                f"| {family}/{size} | {fmt_time(g)} | {fmt_time(h)} | {fmt_time(r)} "
                f"| {fmt_time(i)} | {fmt_ratio(ratio(g, h))} | {fmt_ratio(ratio(g, r))} |"
            )
    others = sorted(
        g for g in results if g.split("/")[0] not in FAMILIES[:-1] and g != "contention"
    )
    for group in others:
        funcs = results[group]
        g, h, r, i = (funcs.get(f) for f in FUNCTIONS)
        lines.append(
            f"| {group} | {fmt_time(g)} | {fmt_time(h)} | {fmt_time(r)} "
            f"| {fmt_time(i)} | {fmt_ratio(ratio(g, h))} | {fmt_ratio(ratio(g, r))} |"
        )
    if "contention" in results:
        c = results["contention"]
        one, two = c.get("tower_gzip/1_threads"), c.get("tower_gzip/2_threads")
        lines.append("")
        lines.append(
            "| contention (1 KiB, shared pool) | 1 thread | 2 threads | 2 threads / 1 thread |"
        )
        lines.append("|---|--:|--:|--:|")
        lines.append(
            f"| tower_gzip, time per response | {fmt_time(one)} | {fmt_time(two)} "
            f"| {fmt_ratio(ratio(two, one))} |"
        )
    return "\n".join(lines)


def targets(results):
    """The issue's time targets: [(text, ok or None when not measured)]."""
    out = []

    def get(group, function):
        return results.get(group, {}).get(function)

    def check(text, r, limit):
        out.append((f"{text}: {fmt_ratio(r)} <= {limit:.2f}", None if r is None else r <= limit))

    for size, limit in [("1KiB", 0.60), ("16KiB", 0.75), ("256KiB", 1.00), ("1MiB", 1.00)]:
        g = f"response/{size}"
        check(f"{g} tower_gzip/tower_http", ratio(get(g, "tower_gzip"), get(g, "tower_http")), limit)
    for size in ["256KiB", "1MiB"]:
        g = f"streaming/{size}"
        check(f"{g} tower_gzip/raw_floor", ratio(get(g, "tower_gzip"), get(g, "raw_floor")), 1.02)
    for size, _ in family_groups(results, "streaming"):
        g = f"streaming/{size}"
        check(f"{g} tower_gzip/tower_http", ratio(get(g, "tower_gzip"), get(g, "tower_http")), 1.00)
    g = "response_l1/1KiB"
    check(f"{g} tower_gzip/tower_http", ratio(get(g, "tower_gzip"), get(g, "tower_http")), 0.65)
    for size, _ in family_groups(results, "request"):
        g = f"request/{size}"
        check(f"{g} tower_gzip/tower_http", ratio(get(g, "tower_gzip"), get(g, "tower_http")), 1.00)
    return out


def svg_chart(results, family, title):
    groups = [(s, f) for s, f in family_groups(results, family) if any(k in f for k in FUNCTIONS)]
    if not groups:
        return None
    values = [f[k] for _, f in groups for k in FUNCTIONS if f.get(k)]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values) * 2.5))
    if hi / lo < 100:
        hi = lo * 100

    width, height = 900, 520
    left, right, top, bottom = 90, 20, 60, 110
    plot_w, plot_h = width - left - right, height - top - bottom

    def y(ns):
        return top + plot_h * (1 - (math.log10(ns) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    e = []
    e.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="13">'
    )
    e.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    e.append(
        f'<text x="{width / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">'
        f"Time per response by size: {esc(title)}</text>"
    )
    e.append(
        f'<text x="{width / 2}" y="47" text-anchor="middle" fill="#555">'
        "median of criterion samples; log scale; lower is better</text>"
    )
    # Gridlines and y labels at every power of ten, minor ticks at 2 and 5.
    decade = lo
    while decade <= hi * 1.0001:
        for m in (1, 2, 5):
            v = decade * m
            if v > hi * 1.0001:
                break
            yy = y(v)
            major = m == 1
            e.append(
                f'<line x1="{left}" x2="{left + plot_w}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{"#ccc" if major else "#eee"}" stroke-width="1"/>'
            )
            e.append(
                f'<text x="{left - 8}" y="{yy + 4:.1f}" text-anchor="end" '
                f'fill="{"#000" if major else "#888"}" font-size="{12 if major else 10}">'
                f"{esc(fmt_time(v))}</text>"
            )
        decade *= 10
    e.append(
        f'<text transform="translate(22 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        "time per response (log scale)</text>"
    )
    # Bars.
    slot = plot_w / len(groups)
    bar_w = min(36, slot * 0.8 / len(FUNCTIONS))
    for gi, (size, funcs) in enumerate(groups):
        x0 = left + slot * gi + (slot - bar_w * len(FUNCTIONS)) / 2
        for fi, name in enumerate(FUNCTIONS):
            v = funcs.get(name)
            if not v:
                continue
            x = x0 + fi * bar_w
            yy = y(v)
            e.append(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{bar_w - 3:.1f}" '
                f'height="{top + plot_h - yy:.1f}" fill="{COLORS[name]}">'
                f"<title>{esc(LABELS[name])}, {size}: {esc(fmt_time(v))}</title></rect>"
            )
            cx = x + (bar_w - 3) / 2
            e.append(
                f'<text transform="translate({cx + 3.5:.1f} {yy - 4:.1f}) rotate(-90)" '
                f'font-size="10" fill="#333">{esc(fmt_time(v))}</text>'
            )
        e.append(
            f'<text x="{left + slot * gi + slot / 2:.1f}" y="{top + plot_h + 20}" '
            f'text-anchor="middle" font-weight="bold">{esc(size)}</text>'
        )
        g, h = funcs.get("tower_gzip"), funcs.get("tower_http")
        if g and h:
            e.append(
                f'<text x="{left + slot * gi + slot / 2:.1f}" y="{top + plot_h + 36}" '
                f'text-anchor="middle" fill="#555" font-size="11">'
                f"tower-gzip/tower-http {g / h:.2f}</text>"
            )
    e.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#000"/>'
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#000"/>'
    )
    e.append(
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 58}" text-anchor="middle">'
        "uncompressed payload size (JSON)</text>"
    )
    # Legend.
    lx = left
    ly = height - 22
    for name in FUNCTIONS:
        e.append(f'<rect x="{lx}" y="{ly - 11}" width="14" height="14" fill="{COLORS[name]}"/>')
        e.append(f'<text x="{lx + 20}" y="{ly + 1}">{esc(LABELS[name])}</text>')
        lx += 40 + 8 * len(LABELS[name])
    e.append("</svg>")
    return "\n".join(e) + "\n"


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criterion", default=os.path.join(root, "target", "criterion"))
    parser.add_argument("--group", default="response", help="group family to chart")
    parser.add_argument("--out", default=None, help="SVG path (default docs/<group>-time.svg)")
    args = parser.parse_args()

    results = load(args.criterion)
    if not results:
        sys.exit(f"no criterion results under {args.criterion}: run `cargo bench --bench response`")

    out = args.out or os.path.join(root, "docs", f"{args.group.replace('_', '-')}-time.svg")
    svg = svg_chart(results, args.group, TITLES.get(args.group, args.group))
    if svg is None:
        print(f"(no `{args.group}/<size>` results: no chart written)", file=sys.stderr)
    else:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write(svg)
        print(f"wrote {os.path.relpath(out, root)}", file=sys.stderr)

    print("Medians (criterion point estimates); ratios < 1 mean tower-gzip is faster.\n")
    print(tables(results))
    print("\nTime targets (same run):\n")
    for text, ok in targets(results):
        mark = "n/a " if ok is None else ("PASS" if ok else "FAIL")
        print(f"- {mark}: {text}")


if __name__ == "__main__":
    main()
