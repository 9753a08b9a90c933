#!/usr/bin/env bash
# The demo's cache under load: a repeated `/api/items?n=1000&start=0` (~200 KB of JSON, known
# in full) with `Accept-Encoding` gzip, br and zstd against identity, side by side, the demo
# pinned to one core and wrk on the other; then the same with `--no-cache`, to show what the
# cache saves.
#
#   scripts/loadtest_cache.sh                  # 10 s per case
#   DURATION=5 scripts/loadtest_cache.sh
#
# Env: DURATION (s per case, default 10), WARMUP (s, 2), CONNECTIONS (16), ROUNDS (3: the
# cases alternate and medians are reported), CACHE_MIN_RATIO (0.75: exits 1 when a coding's
# median requests/s with the cache is under this share of identity's), OUT (markdown,
# default target/loadtest/results-cache.md).
set -euo pipefail

DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-16}"
ROUNDS="${ROUNDS:-3}"
CACHE_MIN_RATIO="${CACHE_MIN_RATIO:-0.75}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT="${OUT:-$ROOT/target/loadtest/results-cache.md}"
PATH_Q="/api/items?n=1000&start=0"
CODINGS=(identity gzip br zstd)

need wrk
command -v curl >/dev/null || die "curl is required"
pin_cores wrk
build_demo

# `/stats`' cache as "admitted hits recompressed" ("off" without one).
cache_stats() {
    curl -sS --max-time 10 "$BASE/stats" | python3 -c '
import json, sys
c = json.load(sys.stdin)["cache"]
print("off" if c is None else "%d %d %d" % (c["admitted"], c["hits"], c["recompressed"]))
'
}

# Fills the cache: each coding until its entry is filed (large bodies by the worker).
warm_cache() {
    local coding i stats=""
    for ((i = 0; i < 300; i++)); do
        for coding in "${CODINGS[@]:1}"; do
            curl -sS --max-time 10 -o /dev/null -H "Accept-Encoding: $coding" "$BASE$PATH_Q"
        done
        stats="$(cache_stats)"
        [[ "$stats" == off || "${stats%% *}" -ge 3 ]] && return
        sleep 0.1
    done
    die "the cache filed fewer than 3 entries in 30 s (/stats: $stats)"
}

# requests/s of wrk on PATH_Q with Accept-Encoding $1 (after WARMUP seconds of the same).
wrk_rps() {
    local out="$WORK/wrk-$1.txt" header="Accept-Encoding: $1"
    "${CLIENT_PIN[@]}" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -H "$header" "$BASE$PATH_Q" >/dev/null
    "${CLIENT_PIN[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -H "$header" "$BASE$PATH_Q" >"$out"
    awk '/^Requests\/sec:/ { print $2 }' "$out"
}

declare -A RPS
for mode in cache no-cache; do
    for ((round = 1; round <= ROUNDS; round++)); do
        flags=()
        [[ "$mode" == no-cache ]] && flags=(--no-cache)
        start_server ours "${flags[@]}"
        warm_cache
        for coding in "${CODINGS[@]}"; do
            rps="$(wrk_rps "$coding")"
            log "== $mode round $round $coding: $rps requests/s (/stats cache: $(cache_stats))"
            RPS[$mode/$coding]+="$rps "
        done
        stop_server
    done
done

mkdir -p "$(dirname "$OUT")"
fail=0
{
    echo "| $PATH_Q ($PINNING) | identity | gzip | br | zstd |"
    echo "|---|--:|--:|--:|--:|"
    for mode in cache no-cache; do
        row="| $mode, requests/s (median of $ROUNDS)"
        id="$(median ${RPS[$mode/identity]})"
        for coding in "${CODINGS[@]}"; do
            m="$(median ${RPS[$mode/$coding]})"
            row+=" | $m ($(ratio "$m" "$id")x)"
        done
        echo "$row |"
    done
} | tee "$OUT"
for coding in "${CODINGS[@]:1}"; do
    r="$(ratio "$(median ${RPS[cache/$coding]})" "$(median ${RPS[cache/identity]})")"
    if awk -v r="$r" -v m="$CACHE_MIN_RATIO" 'BEGIN { exit !(r < m) }'; then
        log "FAIL: $coding with the cache at ${r}x identity's requests/s (< $CACHE_MIN_RATIO)"
        fail=1
    fi
done
exit "$fail"
