# The `governor` section of scripts/loadtest.sh (sourced by it: uses scripts/lib.sh's
# start_server, stop_server, BASE, WORK, and its pick_n, to_ms, WRK_PIN, DURATION, WARMUP,
# CONNECTIONS, OUT).
# shellcheck shell=bash

# "requests/s p99_ms bytes_per_response" of one wrk run against the server now running.
governor_run() { # $1: coding, $2: path, $3: extra wrk args (a pacing script), $4: connections
    local out="$WORK/wrk-governor.txt" stats
    # shellcheck disable=SC2086
    "${WRK_PIN[@]}" wrk -t1 -c"$4" -d"${DURATION}s" --timeout 10s --latency $3 \
        -H "Accept-Encoding: $1" "$BASE$2" >"$out"
    cat "$out" >&2
    stats="$(curl -sS --max-time 10 "$BASE/stats")"
    python3 - "$1" "$stats" <<'PY'
import json, sys
coding, stats = sys.argv[1], json.loads(sys.argv[2])
c = stats["codings"][coding]
gov = stats.get("governor") or {}
print(round(c["bytes_out"] / max(c["compressed"], 1)), gov.get("levels", {}).get(coding, "-"))
PY
    awk '/^Requests\/sec:/ { print $2 }' "$out"
    to_ms "$(awk '$1 == "99%" { print $2 }' "$out")"
}

# Sets RESULT (bytes, level, requests/s, p99 ms): one server, one load. No subshell, so the
# EXIT trap of loadtest.sh still sees SERVER_PID.
RESULT=()
governor_case() { # $1: coding, $2: level, $3: static | adaptive, $4: path, $5: pacing (or "")
    local flags=(--level "$1=$2") conns="$CONNECTIONS"
    [[ "$3" == adaptive ]] && flags+=(--adaptive)
    [[ -n "$5" ]] && conns=1
    start_server ours "${flags[@]}"
    log "== governor: $1=$2 $3${5:+, light}: $BASE$4"
    "${WRK_PIN[@]}" wrk -t1 -c"$conns" -d"${WARMUP}s" $5 -H "Accept-Encoding: $1" "$BASE$4" >/dev/null
    governor_run "$1" "$4" "$5" "$conns" >"$WORK/governor-result"
    stop_server
    read -r -a RESULT <<<"$(tr '\n' ' ' <"$WORK/governor-result")"
}

governor_section() {
    local path coding level static adaptive light_static light_adaptive pace rps delay
    start_server ours
    path="/api/items?n=$(pick_n 65536)"
    stop_server
    local table="$WORK/governor.md"
    {
        echo "Governor: the demo pinned to one core, \`$path\`, wrk ${CONNECTIONS} connections," \
            "${DURATION} s per case after ${WARMUP} s; light load: 1 connection paced to a" \
            "tenth of the static level's requests/s. Bytes: mean compressed response."
        echo
        echo "| coding | load | static req/s | adaptive req/s | ratio | static p99 ms | adaptive p99 ms | ratio | static B | adaptive B | ratio | adaptive level |"
        echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    } >"$table"
    for pair in br=9 zstd=12; do
        coding="${pair%=*}" level="${pair#*=}"
        governor_case "$coding" "$level" static "$path" ""
        static=("${RESULT[@]}")
        governor_case "$coding" "$level" adaptive "$path" ""
        adaptive=("${RESULT[@]}")
        governor_row "$coding" heavy static adaptive >>"$table"
        rps="${static[2]}"
        delay="$(awk -v r="$rps" 'BEGIN { d = 10000 / (r > 0 ? r : 1); printf "%d", (d < 1 ? 1 : d) }')"
        pace="$WORK/pace.lua"
        printf 'function delay()\n  return %s\nend\n' "$delay" >"$pace"
        governor_case "$coding" "$level" static "$path" "-s $pace"
        light_static=("${RESULT[@]}")
        governor_case "$coding" "$level" adaptive "$path" "-s $pace"
        light_adaptive=("${RESULT[@]}")
        governor_row "$coding" light light_static light_adaptive >>"$table"
    done
    {
        echo
        echo "Targets: heavy load, adaptive/static requests/s >= 1.5, p99 <= 0.6, bytes <= 1.3;" \
            "light load, identical bytes (ratio 1.00)."
    } >>"$table"
    cat "$table"
    mkdir -p "$(dirname "$OUT")"
    cp "$table" "${OUT%.md}-governor.md"
    log "governor results written to ${OUT%.md}-governor.md"
}

governor_row() { # $1: coding, $2: load, $3/$4: names of the static and adaptive arrays
    local -n s=$3 a=$4
    # Each array: bytes, level, requests/s, p99 ms.
    awk -v c="$1" -v l="$2" -v sb="${s[0]}" -v ab="${a[0]}" -v al="${a[1]}" \
        -v sr="${s[2]}" -v ar="${a[2]}" -v sp="${s[3]}" -v ap="${a[3]}" 'BEGIN {
        printf "| %s | %s | %.1f | %.1f | %.2f | %.0f | %.0f | %.2f | %d | %d | %.2f | %s |\n",
            c, l, sr, ar, ar / sr, sp, ap, ap / sp, sb, ab, ab / sb, al
    }'
}

governor_section
