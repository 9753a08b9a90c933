#!/usr/bin/env python3
"""Chart and tables from criterion's results of `cargo bench -p tower-gzip-bench --bench response`.

    python3 scripts/bench_chart.py                      # docs/response-time.svg + tables
    python3 scripts/bench_chart.py --group streaming --out docs/streaming-time.svg
    cargo run --release -p tower-gzip-bench --bin allocs > target/allocs.md
    python3 scripts/bench_chart.py --allocs target/allocs.md   # + "which coding" table
    python3 scripts/bench_chart.py --criterion run1/criterion --criterion run2/criterion

With several `--criterion` directories (copies of `target/criterion` after separate runs),
each time is the median of the runs' medians and each ratio the median of the per-run
ratios (a ratio always compares functions of one run); the tables also show the range of
the per-run ratios tower_gzip/tower_http, a measure of the noise.

Reads every `target/criterion/**/new/benchmark.json` with its `estimates.json` (median
point estimate, in ns), then:

- writes an SVG of time per response by size (grouped bars, log time axis, one scale):
  by default one panel per coding (`response` for gzip, `response_zstd`, `response_br`),
  with `--group` one group family; bars tower_gzip, tower_http, libdeflate_floor (gzip up
  to 64 KiB), raw_floor, identity;
- prints markdown tables of the medians and the ratios tower_gzip/tower_http,
  tower_gzip/raw_floor and tower_gzip/libdeflate_floor for every group found (response,
  response_l1, streaming, response_zstd, response_br, request, request_zstd, request_br,
  contention), then the time targets with PASS/FAIL;
- with `--allocs` (the output of `bench/src/bin/allocs.rs`, which ends with the bytes on
  the wire per size and coding): a table of our time and output bytes per size and coding.

Python 3 standard library only.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict

FUNCTIONS = ["tower_gzip", "tower_http", "libdeflate_floor", "raw_floor", "identity"]
COLORS = {
    "tower_gzip": "#1f77b4",
    "tower_http": "#ff7f0e",
    "libdeflate_floor": "#98df8a",
    "raw_floor": "#2ca02c",
    "identity": "#7f7f7f",
}
LABELS = {
    "tower_gzip": "tower-gzip",
    "tower_http": "tower-http 0.7",
    "libdeflate_floor": "libdeflate alone",
    "raw_floor": "raw codec floor",
    "identity": "identity (no compression)",
}
FAMILIES = [
    "response",
    "response_l1",
    "streaming",
    "response_zstd",
    "response_br",
    "request",
    "request_zstd",
    "request_br",
    "contention",
]
SIZE_ORDER = {"1KiB": 0, "16KiB": 1, "64KiB": 2, "256KiB": 3, "1MiB": 4}
TITLES = {
    "response": "Full<Bytes> JSON response, gzip level 6",
    "response_l1": "Full<Bytes> JSON response, gzip level 1",
    "streaming": "streamed JSON response (16 KiB frames), gzip level 6",
    "response_zstd": "Full<Bytes> JSON response, zstd level 3",
    "response_br": "Full<Bytes> JSON response, br quality 4",
    "request": "gzip request body decompression",
    "request_zstd": "zstd request body decompression",
    "request_br": "br request body decompression",
}
# The default chart: one panel per coding, on one time scale.
CODING_PANELS = [
    ("response", "gzip, level 6 (raw floor: zlib-rs)"),
    ("response_zstd", "zstd, level 3 (raw floor: libzstd, reused context)"),
    ("response_br", "br, quality 4 (raw floor: brotli crate, one call)"),
]
CODING_OF = {"response": "gzip", "response_zstd": "zstd", "response_br": "br"}


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


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def merge_runs(runs):
    """Several runs' results into one: each time is the median of the runs' medians, and
    each ratio (key `("ratio", a, b)`) the median of the per-run ratios, so that a ratio
    always compares functions measured in the same run. The per-run ratios
    tower_gzip/tower_http are kept under `_ratios`."""
    if len(runs) == 1:
        return runs[0]
    merged = defaultdict(dict)
    for group in set().union(*runs):
        functions = set().union(*(r.get(group, {}) for r in runs))
        for function in functions:
            merged[group][function] = median(
                r[group][function] for r in runs if function in r.get(group, {})
            )
        for a in ["tower_gzip"]:
            for b in FUNCTIONS[1:]:
                per_run = [
                    r[group][a] / r[group][b]
                    for r in runs
                    if r.get(group, {}).get(a) and r[group].get(b)
                ]
                if per_run:
                    merged[group][("ratio", a, b)] = median(per_run)
                    if b == "tower_http":
                        merged[group]["_ratios"] = per_run
    return merged


def fmt_range(values):
    if not values or len(values) < 2:
        return "-"
    return f"{min(values):.2f}-{max(values):.2f}"


def group_ratio(funcs, a, b):
    """a/b for one group: the median of per-run ratios when several runs were merged."""
    merged = funcs.get(("ratio", a, b))
    return merged if merged is not None else ratio(funcs.get(a), funcs.get(b))


def table_row(group, funcs):
    g, h, d, r, i = (funcs.get(f) for f in FUNCTIONS)
    return (
        f"| {group} | {fmt_time(g)} | {fmt_time(h)} | {fmt_time(r)} | {fmt_time(d)} "
        f"| {fmt_time(i)} | {fmt_ratio(group_ratio(funcs, 'tower_gzip', 'tower_http'))} "
        f"| {fmt_range(funcs.get('_ratios'))} "
        f"| {fmt_ratio(group_ratio(funcs, 'tower_gzip', 'raw_floor'))} "
        f"| {fmt_ratio(group_ratio(funcs, 'tower_gzip', 'libdeflate_floor'))} |"
    )


def tables(results):
    lines = []
    lines.append(
        "| group | tower_gzip | tower_http | raw_floor | libdeflate_floor | identity "
        "| tower_gzip/tower_http | per-run tower_gzip/tower_http | tower_gzip/raw_floor "
        "| tower_gzip/libdeflate_floor |"
    )
    lines.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for family in FAMILIES[:-1]:
        for size, funcs in family_groups(results, family):
            lines.append(table_row(f"{family}/{size}", funcs))
    others = sorted(
        g for g in results if g.split("/")[0] not in FAMILIES[:-1] and g != "contention"
    )
    for group in others:
        lines.append(table_row(group, results[group]))
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
    """The time targets: [(text, ok or None when not measured)]."""
    out = []

    def get(group, function):
        return results.get(group, {}).get(function)

    def rat(group, a, b):
        return group_ratio(results.get(group, {}), a, b)

    def check(text, r, limit):
        out.append((f"{text}: {fmt_ratio(r)} <= {limit:.2f}", None if r is None else r <= limit))

    for size, limit in [("1KiB", 0.60), ("16KiB", 0.75), ("256KiB", 1.00), ("1MiB", 1.00)]:
        g = f"response/{size}"
        check(f"{g} tower_gzip/tower_http", rat(g, "tower_gzip", "tower_http"), limit)
    for size in ["256KiB", "1MiB"]:
        g = f"streaming/{size}"
        check(f"{g} tower_gzip/raw_floor", rat(g, "tower_gzip", "raw_floor"), 1.02)
    for size, _ in family_groups(results, "streaming"):
        g = f"streaming/{size}"
        check(f"{g} tower_gzip/tower_http", rat(g, "tower_gzip", "tower_http"), 1.00)
    g = "response_l1/1KiB"
    check(f"{g} tower_gzip/tower_http", rat(g, "tower_gzip", "tower_http"), 0.65)
    for size, _ in family_groups(results, "request"):
        g = f"request/{size}"
        check(f"{g} tower_gzip/tower_http", rat(g, "tower_gzip", "tower_http"), 1.00)
    # The one-shot gzip path against its own codec, zstd and br against tower-http.
    for size in ["1KiB", "16KiB"]:
        g = f"response/{size}"
        r = rat(g, "tower_gzip", "libdeflate_floor")
        check(f"{g} tower_gzip/libdeflate_floor", r, 1.05)
    for family, limits in [
        ("response_zstd", [("1KiB", 0.30), ("16KiB", 0.70), ("256KiB", 1.00), ("1MiB", 1.00)]),
        ("response_br", [("1KiB", 0.70), ("16KiB", 1.00), ("256KiB", 1.00), ("1MiB", 1.00)]),
    ]:
        for size, limit in limits:
            g = f"{family}/{size}"
            r = rat(g, "tower_gzip", "tower_http")
            check(f"{g} tower_gzip/tower_http", r, limit)
    for g in ["request_zstd/16KiB", "request_br/16KiB"]:
        check(f"{g} tower_gzip/tower_http", rat(g, "tower_gzip", "tower_http"), 0.80)
    return out


def parse_wire_sizes(path):
    """{(size_label, coding): our bytes} from the last table of `bench/src/bin/allocs.rs`'s output
    (`| 1KiB (1024 B) | 323 / 326 | ...`, headed `| size | gzip | deflate | zstd | br |`)."""
    sizes, header = {}, None
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == "size":
                header = cells[1:]
                continue
            if header is None or not cells or cells[0].startswith("-"):
                continue
            label = cells[0].split(" ")[0]
            for coding, cell in zip(header, cells[1:]):
                ours = cell.split("/")[0].strip()
                if ours.isdigit():
                    sizes[(label, coding)] = int(ours)
    return sizes


def which_coding(results, wire):
    """Our time and output bytes per size and coding (`wire` from `parse_wire_sizes`)."""
    codings = [(fam, CODING_OF[fam]) for fam, _ in CODING_PANELS]
    head = "| size | " + " | ".join(f"{c}: time, bytes" for _, c in codings) + " |"
    lines = [head, "|---|" + "--:|" * len(codings)]
    labels = sorted(
        {s for fam, _ in codings for s, _ in family_groups(results, fam)},
        key=lambda s: SIZE_ORDER.get(s, 99),
    )
    for label in labels:
        cells = []
        for fam, coding in codings:
            t = results.get(f"{fam}/{label}", {}).get("tower_gzip")
            b = wire.get((label, coding))
            cells.append(f"{fmt_time(t)}, {'-' if b is None else f'{b:,} B'}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def svg_chart(results, panels, title, runs=1):
    """One SVG, one panel per (family, subtitle) in `panels`, stacked, on one log time scale."""
    panels = [
        (fam, sub, [(s, f) for s, f in family_groups(results, fam) if any(k in f for k in FUNCTIONS)])
        for fam, sub in panels
    ]
    panels = [p for p in panels if p[2]]
    if not panels:
        return None
    values = [f[k] for _, _, groups in panels for _, f in groups for k in FUNCTIONS if f.get(k)]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values) * 2.5))
    if hi / lo < 100:
        hi = lo * 100
    present = [k for k in FUNCTIONS if any(k in f for _, _, groups in panels for _, f in groups)]

    width = 900
    left, right, header, panel_gap, footer = 90, 20, 60, 70, 40
    plot_h = 330
    plot_w = width - left - right
    height = header + len(panels) * (plot_h + panel_gap) + footer

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
        f"{'median of criterion samples' if runs == 1 else f'median over {runs} criterion runs'}; "
        "ratios: median of per-run ratios; log scale, one for all panels; lower is better</text>"
    )
    for pi, (_fam, subtitle, groups) in enumerate(panels):
        top = header + pi * (plot_h + panel_gap) + 22
        e.extend(panel(groups, subtitle, top, left, plot_w, plot_h - 22, lo, hi, present))
    # Legend.
    lx = left
    ly = height - 16
    for name in present:
        e.append(f'<rect x="{lx}" y="{ly - 11}" width="14" height="14" fill="{COLORS[name]}"/>')
        e.append(f'<text x="{lx + 20}" y="{ly + 1}">{esc(LABELS[name])}</text>')
        lx += 36 + 7 * len(LABELS[name])
    e.append("</svg>")
    return "\n".join(e) + "\n"


def panel(groups, subtitle, top, left, plot_w, plot_h, lo, hi, functions):
    """SVG elements of one panel: grouped bars per size, gridlines, labels."""

    def y(ns):
        return top + plot_h * (1 - (math.log10(ns) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    e = []
    e.append(
        f'<text x="{left}" y="{top - 8}" font-size="15" font-weight="bold">{esc(subtitle)}</text>'
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
            if major or plot_h > 250:
                e.append(
                    f'<text x="{left - 8}" y="{yy + 4:.1f}" text-anchor="end" '
                    f'fill="{"#000" if major else "#888"}" font-size="{12 if major else 10}">'
                    f"{esc(fmt_time(v))}</text>"
                )
        decade *= 10
    e.append(
        f'<text transform="translate(22 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        "time per response</text>"
    )
    slot = plot_w / len(groups)
    bar_w = min(36, slot * 0.8 / len(functions))
    for gi, (size, funcs) in enumerate(groups):
        here = [name for name in functions if funcs.get(name)]
        x0 = left + slot * gi + (slot - bar_w * len(here)) / 2
        for fi, name in enumerate(here):
            v = funcs[name]
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
            f'<text x="{left + slot * gi + slot / 2:.1f}" y="{top + plot_h + 18}" '
            f'text-anchor="middle" font-weight="bold">{esc(size)}</text>'
        )
        r = group_ratio(funcs, "tower_gzip", "tower_http")
        if r:
            e.append(
                f'<text x="{left + slot * gi + slot / 2:.1f}" y="{top + plot_h + 34}" '
                f'text-anchor="middle" fill="#555" font-size="11">'
                f"tower-gzip/tower-http {r:.2f}</text>"
            )
    e.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#000"/>'
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#000"/>'
    )
    return e


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--criterion",
        action="append",
        help="criterion output directory (default target/criterion); repeat it for several "
        "runs: each time is then the median of the runs' medians",
    )
    parser.add_argument(
        "--group", default=None, help="chart one group family (default: one panel per coding)"
    )
    parser.add_argument("--out", default=None, help="SVG path (default docs/<group>-time.svg)")
    parser.add_argument("--allocs", default=None, help="output of bench/src/bin/allocs.rs (wire sizes)")
    args = parser.parse_args()

    roots = args.criterion or [os.path.join(root, "target", "criterion")]
    runs = [load(r) for r in roots]
    if not all(runs):
        sys.exit(f"no criterion results under one of {roots}: run `cargo bench -p tower-gzip-bench --bench response`")
    results = merge_runs(runs)

    if args.group:
        name = args.group
        title = TITLES.get(name, name)
        svg = svg_chart(results, [(name, title)], title, len(runs))
    else:
        name = "response"
        svg = svg_chart(results, CODING_PANELS, "Full<Bytes> JSON response, per coding", len(runs))
    out = args.out or os.path.join(root, "docs", f"{name.replace('_', '-')}-time.svg")
    if svg is None:
        print(f"(no `{name}/<size>` results: no chart written)", file=sys.stderr)
    else:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write(svg)
        print(f"wrote {os.path.relpath(out, root)}", file=sys.stderr)

    print(
        f"Medians (criterion point estimates; {len(runs)} run(s), the median of their "
        "medians); ratios < 1 mean tower-gzip is faster.\n"
    )
    print(tables(results))
    if args.allocs:
        print("\nOur time and bytes on the wire per coding (JSON, default levels):\n")
        print(which_coding(results, parse_wire_sizes(args.allocs)))
    print("\nTime targets (same run):\n")
    for text, ok in targets(results):
        mark = "n/a " if ok is None else ("PASS" if ok else "FAIL")
        print(f"- {mark}: {text}")


if __name__ == "__main__":
    main()
