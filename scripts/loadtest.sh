#!/usr/bin/env bash
# shellcheck disable=SC2034  # the result arrays are read through a nameref in row()
# Loopback load test: the demo server with our layers against the same server with
# tower-http's (`--baseline tower-http`), driven by wrk over 127.0.0.1 only.
#
#   scripts/loadtest.sh                      # 15 s per case, both sections
#   DURATION=10 scripts/loadtest.sh          # shorter
#   SECTIONS=governor scripts/loadtest.sh    # one section (compare, governor, learn)
#   SECTIONS=learn scripts/loadtest.sh       # learning on against --no-learn (~80 s)
#
# Env: SECTIONS (comma list, default compare,governor), DURATION (s per case, default 15),
# WARMUP (s, default 2), CONNECTIONS (64), THREADS (2), ROUNDS (1; with more, servers
# alternate and medians are reported), OUT (markdown results file, default
# target/loadtest/results.md; the governor and learn sections write OUT with `-governor`,
# `-learn` before `.md`). Section learn: LEARN_ROUNDS (3), LEARN_DURATION (s, 10),
# LEARN_CONNECTIONS (32), LEARN_WARM (requests before the load, 2000), LEARN_MIN_RATIO (0.95).
#
# Section `governor` (scripts/loadtest_governor.sh): the demo pinned to one core, ~64 KiB of
# JSON with `Accept-Encoding: br` at `--level br=9`, then `zstd` at `--level zstd=12`,
# CONNECTIONS connections (past what the core can compress): the static level against
# `--adaptive`, side by side; then a light load (one connection, paced to a tenth of the
# static level's requests/s) where the governor must leave the bytes alone.
#
# Section `learn` (scripts/loadtest_learn.sh; not in the default list): the demo pinned to one
# core, learning the API dictionary (the default) against `--no-learn`, side by side:
# LEARN_WARM requests of /api/items?n=5 (the learned side must be serving its dictionary),
# then wrk on /api/items?n=5&start=S (~1 KiB, S varying), LEARN_ROUNDS rounds alternating.
# Exits 1 when the median on/off requests/s ratio, or off/on server CPU per request (the same
# ratio when the core is the server's alone; requests/s is not when other processes share
# it), is below LEARN_MIN_RATIO.
#
# For each payload (~1 KiB and ~64 KiB JSON from /api/items?n=N, with N measured so the
# uncompressed body is closest to the target) and each server, a fresh server process is
# started, warmed up, loaded with `wrk --latency -H 'Accept-Encoding: gzip'`, sampled from
# /proc and stopped. Reported: requests/s, p50/p99 latency, server peak RSS (VmHWM), server
# CPU time per request and minor page faults per request (a proxy for allocator churn: the
# demo has no allocation counter), and the ratio ours/tower-http. A third run, our server
# asked for `Accept-Encoding: identity`, shows what the handler costs without compression.
#
# The server is pinned to core 0 and wrk to core 1 when `taskset` exists and there are at
# least 2 CPUs. Every load run is bounded by DURATION; the script stops by itself and kills
# only the processes it started (scripts/lib.sh's trap on EXIT).
# Memory per in-flight stream (h2load, slow readers, idle SSE): scripts/loadtest_streams.sh.
set -euo pipefail

DURATION="${DURATION:-15}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
ROUNDS="${ROUNDS:-1}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT="${OUT:-$ROOT/target/loadtest/results.md}"

# --- tools -------------------------------------------------------------------------------
need wrk
command -v curl >/dev/null || die "curl is required"

pin_cores wrk
WRK_PIN=("${CLIENT_PIN[@]}")

# --- build -------------------------------------------------------------------------------
build_demo --features metrics

# "allocations bytes" from the server's /stats `allocator` object, or "" when it has none.
alloc_counters() {
    curl -sS --max-time 10 "$BASE/stats" 2>/dev/null | python3 -c '
import json, sys
try:
    a = json.load(sys.stdin)["allocator"]
    print(int(a["allocations"]), int(a["bytes"]))
except Exception:
    pass
' || true
}

body_size() { # uncompressed body size of $1 (a path)
    curl -sS --max-time 10 -o /dev/null -w '%{size_download}' "$BASE$1"
}

# n for /api/items whose uncompressed body is closest to $1 bytes (a handful of requests).
pick_n() {
    local target=$1 probe=100 size n best_n=1 best_d=-1 d
    size="$(body_size "/api/items?n=$probe")"
    n=$(((target * probe + size / 2) / size))
    ((n < 1)) && n=1
    for ((k = n - 3; k <= n + 3; k++)); do
        ((k < 1)) && continue
        size="$(body_size "/api/items?n=$k")"
        d=$((size > target ? size - target : target - size))
        if ((best_d < 0 || d < best_d)); then best_d=$d; best_n=$k; fi
    done
    echo "$best_n"
}

# wrk latency "1.23ms" / "456.00us" / "1.02s" -> milliseconds
to_ms() {
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
        else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
        else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
        else { printf "%s", v }
    }'
}

# --- runs --------------------------------------------------------------------------------
TICK="$(getconf CLK_TCK)"
declare -A RPS P50 P99 HWM CPU FLT WIRE ALLOCS ABYTES
N_1K="" N_64K=""

run_case() { # $1: ours | tower-http | identity (our server, uncompressed), $2: label, $3: path, $4: round
    local server=$1 label=$2 path=$3 key="$1/$2/$4" url enc t0 f0 t1 f1 a0 a1 reqs out ae="gzip"
    if [[ "$server" == identity ]]; then
        ae="identity"
        start_server ours
    else
        start_server "$server"
    fi
    url="$BASE$path"
    enc="$(curl -sS --max-time 10 -o /dev/null -D - -H "Accept-Encoding: $ae" "$url" |
        awk -F': *' 'tolower($1) == "content-encoding" { gsub(/\r/, "", $2); print $2 }')"
    WIRE["$key"]="$(curl -sS --max-time 10 -o /dev/null -w '%{size_download}' \
        -H "Accept-Encoding: $ae" "$url") B ${enc:-identity}"
    log "== round $4, $server, $label: $url (${WIRE["$key"]}); warm-up ${WARMUP}s, run ${DURATION}s"
    "${WRK_PIN[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" --timeout 5s \
        -H "Accept-Encoding: $ae" "$url" >/dev/null
    a0="$(alloc_counters)"
    t0="$(proc_ticks)"
    f0="$(proc_minflt)"
    out="$WORK/wrk-$server-$label.txt"
    "${WRK_PIN[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 5s --latency \
        -H "Accept-Encoding: $ae" "$url" >"$out"
    t1="$(proc_ticks)"
    f1="$(proc_minflt)"
    a1="$(alloc_counters)"
    HWM["$key"]="$(proc_status_kb VmHWM)"
    stop_server
    cat "$out" >&2
    if grep -qE 'Non-2xx|Socket errors' "$out"; then
        log "warning: wrk reported errors or non-2xx responses for $server, $label"
    fi
    RPS["$key"]="$(awk '/^Requests\/sec:/ { print $2 }' "$out")"
    P50["$key"]="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")"
    P99["$key"]="$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")"
    reqs="$(awk '/requests in/ { print $1 }' "$out")"
    CPU["$key"]="$(awk -v t="$((t1 - t0))" -v hz="$TICK" -v r="$reqs" \
        'BEGIN { printf "%.1f", (r > 0 ? t / hz * 1e6 / r : 0) }')"
    FLT["$key"]="$(awk -v f="$((f1 - f0))" -v r="$reqs" \
        'BEGIN { printf "%.3f", (r > 0 ? f / r : 0) }')"
    ALLOCS["$key"]="n/a"
    ABYTES["$key"]="n/a"
    if [[ -n "$a0" && -n "$a1" ]]; then
        read -r ALLOCS["$key"] ABYTES["$key"] < <(
            awk -v a0="$a0" -v a1="$a1" -v r="$reqs" 'BEGIN {
                split(a0, x, " "); split(a1, y, " ")
                if (r > 0) printf "%.1f %.0f\n", (y[1] - x[1]) / r, (y[2] - x[2]) / r
                else print "n/a n/a"
            }'
        )
    fi
}

SECTIONS="${SECTIONS:-compare,governor}"
want() { [[ ",$SECTIONS," == *",$1,"* ]]; }

if want governor; then
    # shellcheck source=scripts/loadtest_governor.sh
    source "$ROOT/scripts/loadtest_governor.sh"
fi
if want learn; then
    # shellcheck source=scripts/loadtest_learn.sh
    source "$ROOT/scripts/loadtest_learn.sh"
fi
want compare || exit 0

# Measure the record count once, on our server.
start_server ours
N_1K="$(pick_n 1024)"
N_64K="$(pick_n 65536)"
SIZE_1K="$(body_size "/api/items?n=$N_1K")"
SIZE_64K="$(body_size "/api/items?n=$N_64K")"
stop_server
log "1 KiB JSON: n=$N_1K ($SIZE_1K B); 64 KiB JSON: n=$N_64K ($SIZE_64K B)"

LABELS=("1KiB" "64KiB")
declare -A PATHS=(["1KiB"]="/api/items?n=$N_1K" ["64KiB"]="/api/items?n=$N_64K")
declare -A SIZES=(["1KiB"]="$SIZE_1K" ["64KiB"]="$SIZE_64K")
# Rounds alternate the servers (ours, tower-http, identity, ours, ...), so that a burst of
# outside load hits all of them alike; each metric is the median over rounds.
for ((round = 1; round <= ROUNDS; round++)); do
    for label in "${LABELS[@]}"; do
        for server in ours tower-http identity; do
            run_case "$server" "$label" "${PATHS[$label]}" "$round"
        done
    done
done

for name in RPS P50 P99 HWM CPU FLT ALLOCS ABYTES; do
    declare -n arr="$name"
    for label in "${LABELS[@]}"; do
        for server in ours tower-http identity; do
            vals=()
            for ((round = 1; round <= ROUNDS; round++)); do
                vals+=("${arr["$server/$label/$round"]}")
            done
            arr["$server/$label"]="$(median "${vals[@]}")"
        done
    done
    unset -n arr
done
for label in "${LABELS[@]}"; do
    for server in ours tower-http identity; do
        WIRE["$server/$label"]="${WIRE["$server/$label/1"]}"
    done
done

# --- report ------------------------------------------------------------------------------
row() { # $1: payload, $2: metric, $3: name of the associative array, $4: label
    local -n values=$3
    local o="${values[ours/$4]}" t="${values[tower-http/$4]}" i="${values[identity/$4]}"
    echo "| $1 | $2 | $o | $t | $(ratio "$o" "$t") | $i |"
}
{
    echo "Loopback load, wrk ${THREADS} threads, ${CONNECTIONS} connections, ${DURATION} s per case" \
        "(after ${WARMUP} s warm-up) x ${ROUNDS} round(s), servers alternating, medians over rounds;" \
        "\`Accept-Encoding: gzip\`, level 6 (identity: our server," \
        "\`Accept-Encoding: identity\`, the handler's own cost); $PINNING;" \
        "$(nproc) CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)."
    echo
    echo "| payload | metric | tower-gzip | tower-http | ours/tower-http | identity (no compression) |"
    echo "|---|---|--:|--:|--:|--:|"
    for label in "${LABELS[@]}"; do
        desc="$label JSON (${SIZES[$label]} B)"
        row "$desc" "requests/s" RPS "$label"
        row "$desc" "p50 latency (ms)" P50 "$label"
        row "$desc" "p99 latency (ms)" P99 "$label"
        row "$desc" "server peak RSS (VmHWM, KiB)" HWM "$label"
        row "$desc" "server CPU per request (us)" CPU "$label"
        row "$desc" "server allocations per request" ALLOCS "$label"
        row "$desc" "server bytes allocated per request" ABYTES "$label"
        row "$desc" "server minor faults per request" FLT "$label"
        echo "| $desc | response on the wire | ${WIRE[ours/$label]} | ${WIRE[tower-http/$label]} | | ${WIRE[identity/$label]} |"
    done
    echo
    echo "Paths: ${PATHS[1KiB]} and ${PATHS[64KiB]}. Targets (1 KiB): requests/s ratio >= 1.15," \
        "p99 ratio < 1, lower allocations per request. Allocations are read from the server's" \
        "/stats \`allocator\` object ({\"allocations\": N, \"bytes\": N}) when it has one (n/a" \
        "otherwise); minor page faults per request are a coarser proxy for allocator churn."
} | tee "$WORK/results.md"
mkdir -p "$(dirname "$OUT")"
cp "$WORK/results.md" "$OUT"
log "results written to $OUT"
