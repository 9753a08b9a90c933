# The `learn` section of scripts/loadtest.sh (sourced by it: uses scripts/lib.sh's
# start_server, stop_server, proc_ticks, median, log, BASE, WORK, SERVER_PID, and its to_ms,
# WRK_PIN, WARMUP, TICK, OUT).
# shellcheck shell=bash

LEARN_ROUNDS="${LEARN_ROUNDS:-3}"
LEARN_DURATION="${LEARN_DURATION:-10}"
LEARN_CONNECTIONS="${LEARN_CONNECTIONS:-32}"
LEARN_WARM="${LEARN_WARM:-2000}"
LEARN_MIN_RATIO="${LEARN_MIN_RATIO:-0.95}"
LEARN_AE="gzip, deflate, br, zstd"
LEARN_PATH="/api/items?n=5"

# wrk's requests: /api/items?n=5&start=S with S different on every request (and thread), so
# that responses differ as real API traffic does and samples are not all one body.
learn_script() {
    cat >"$WORK/learn.lua" <<'LUA'
local id, n = 0, 0
function setup(thread)
  id = id + 1
  thread:set("id", id)
end
function request()
  n = n + 1
  return wrk.format(nil, "/api/items?n=5&start=" .. ((id * 1000003 + n * 7919) % 1000000000))
end
LUA
}

# `.dictionaries.learned` of /stats as "phase version taken dropped builds" ("off" without
# a learner; version "-" before the first dictionary).
learn_stats() {
    curl -sS --max-time 10 "$BASE/stats" | python3 -c '
import json, sys
l = json.load(sys.stdin)["dictionaries"]["learned"]
if l is None:
    print("off")
else:
    c = l["current"] or {}
    print(l["phase"], c.get("version", "-"), l["taken"], l["refused"].get("busy", 0), l["builds"])
'
}

# utime+stime (clock ticks) of the server's learner thread, 0 without one.
learner_ticks() {
    local t
    for t in /proc/"$SERVER_PID"/task/*; do
        if [[ "$(cat "$t/comm" 2>/dev/null)" == tower-gzip-lear* ]]; then
            awk '{ print $14 + $15; exit }' "$t/stat"
            return
        fi
    done
    echo 0
}

# One server, one load. Sets LEARN_RESULT (the order of LEARN_METRICS below).
LEARN_RESULT=()
learn_case() { # $1: on | off, $2: round
    local flags=() out="$WORK/wrk-learn-$1.txt" stats="" i t0 l0 t1 l1 s0 s1
    [[ "$1" == off ]] && flags=(--no-learn)
    start_server ours "${flags[@]}"
    # LEARN_WARM requests from seven clients: the learner builds its first dictionary from
    # 200 samples once they come from 3 distinct clients (peer addresses).
    warm_from_clients "$BASE$LEARN_PATH" "$(((LEARN_WARM - 1) * 1000))" 120 "$LEARN_AE"
    for ((i = 0; i < 600; i++)); do # at most 60 s for the build
        stats="$(learn_stats)"
        [[ "$1" == off || "$stats" == serving\ [0-9]* ]] && break
        sleep 0.1
    done
    if [[ "$1" == on && "$stats" != serving\ [0-9]* ]]; then
        log "error: no learned dictionary 60 s after $LEARN_WARM requests (/stats: $stats)"
        exit 1
    fi
    if [[ "$1" == off && "$stats" != off ]]; then
        log "error: --no-learn still learns (/stats: $stats)"
        exit 1
    fi
    log "== learn: round $2, learning $1 (/stats: $stats): $BASE$LEARN_PATH&start=S;" \
        "warm-up ${WARMUP}s, run ${LEARN_DURATION}s"
    "${WRK_PIN[@]}" wrk -t2 -c"$LEARN_CONNECTIONS" -d"${WARMUP}s" --timeout 5s \
        -s "$WORK/learn.lua" -H "Accept-Encoding: $LEARN_AE" "$BASE$LEARN_PATH" >/dev/null
    s0="$(learn_stats)"
    t0="$(proc_ticks)"
    l0="$(learner_ticks)"
    "${WRK_PIN[@]}" wrk -t2 -c"$LEARN_CONNECTIONS" -d"${LEARN_DURATION}s" --timeout 5s \
        --latency -s "$WORK/learn.lua" -H "Accept-Encoding: $LEARN_AE" "$BASE$LEARN_PATH" >"$out"
    t1="$(proc_ticks)"
    l1="$(learner_ticks)"
    s1="$(learn_stats)"
    stop_server
    cat "$out" >&2
    if grep -qE 'Non-2xx|Socket errors' "$out"; then
        log "warning: wrk reported errors or non-2xx responses for learning $1"
    fi
    if [[ "$1" == on && "${s1%% *}" != serving ]]; then
        log "warning: the learner left its serving phase during the run (/stats: $s1)"
    fi
    read -r -a LEARN_RESULT <<<"$(
        awk -v hz="$TICK" -v t="$((t1 - t0))" -v l="$((l1 - l0))" -v s0="$s0" -v s1="$s1" \
            -v rps="$(awk '/^Requests\/sec:/ { print $2 }' "$out")" \
            -v p50="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")" \
            -v p99="$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")" \
            -v r="$(awk '/requests in/ { print $1 }' "$out")" \
            -v secs="$(awk '/requests in/ { sub(/s,$/, "", $4); print $4 }' "$out")" 'BEGIN {
            split(s0, a, " "); split(s1, b, " ")
            taken = (s1 == "off" ? 0 : b[3] - a[3]); dropped = (s1 == "off" ? 0 : b[4] - a[4])
            if (r <= 0 || secs <= 0) { r = 1; secs = 1 }
            printf "%s %s %s %.1f %.1f %.0f %d %d\n", rps, p50, p99, t / hz * 1e6 / r,
                l / hz * 1e6 / r, 100 * t / hz / secs, taken, dropped
        }'
    )"
}

# LEARN[side/metric/round], side on | off | ratio; ratio/rps/N is on/off requests/s and
# ratio/cpu/N off/on CPU per request (what on/off requests/s is when the core is the server's).
declare -A LEARN
LEARN_METRICS=(rps p50 p99 cpu learner core taken dropped)

learn_med() { # $1: side, $2: metric; the median over rounds
    local vals=() round
    for ((round = 1; round <= LEARN_ROUNDS; round++)); do
        vals+=("${LEARN[$1/$2/$round]}")
    done
    median "${vals[@]}"
}

learn_row() { # $1: a round number, or "median"
    local v=() key
    for key in on/rps off/rps ratio/rps on/p99 off/p99 on/cpu on/learner off/cpu ratio/cpu \
        on/core off/core; do
        if [[ "$1" == median ]]; then
            v+=("$(learn_med "${key%/*}" "${key#*/}")")
        else
            v+=("${LEARN[$key/$1]}")
        fi
    done
    echo "| $1 | ${v[0]} | ${v[1]} | ${v[2]} | ${v[3]} | ${v[4]} | ${v[5]} (${v[6]}) |" \
        "${v[7]} | ${v[8]} | ${v[9]}% / ${v[10]}% |"
}

learn_section() {
    local round side i size wire verdict rps_ratio cpu_ratio table="$WORK/learn.md"
    learn_script
    start_server ours --no-learn
    size="$(curl -sS --max-time 10 -o /dev/null -w '%{size_download}' "$BASE$LEARN_PATH&start=12345")"
    wire="$(curl -sS --max-time 10 -o /dev/null -w '%{size_download}' \
        -H "Accept-Encoding: $LEARN_AE" "$BASE$LEARN_PATH&start=12345")"
    stop_server
    # Rounds alternate the two servers (on, off, on, off, ...), so that outside load hits
    # both alike; the checks are on the medians of the per-round ratios.
    for ((round = 1; round <= LEARN_ROUNDS; round++)); do
        for side in on off; do
            learn_case "$side" "$round"
            for i in "${!LEARN_METRICS[@]}"; do
                LEARN["$side/${LEARN_METRICS[$i]}/$round"]="${LEARN_RESULT[$i]}"
            done
        done
        LEARN["ratio/rps/$round"]="$(awk -v a="${LEARN[on/rps/$round]}" \
            -v b="${LEARN[off/rps/$round]}" 'BEGIN { printf "%.3f", a / b }')"
        LEARN["ratio/cpu/$round"]="$(awk -v a="${LEARN[off/cpu/$round]}" \
            -v b="${LEARN[on/cpu/$round]}" 'BEGIN { printf "%.3f", a / b }')"
    done
    rps_ratio="$(learn_med ratio rps)"
    cpu_ratio="$(learn_med ratio cpu)"
    verdict="$(awk -v r="$rps_ratio" -v c="$cpu_ratio" -v m="$LEARN_MIN_RATIO" \
        'BEGIN { print (r >= m && c >= m ? "pass" : "FAIL") }')"
    {
        echo "Learning: the demo pinned to one core (its learner thread too), \`$LEARN_PATH&start=S\`" \
            "with S different on every request ($size B of JSON, $wire B as zstd)," \
            "\`Accept-Encoding: $LEARN_AE\`, wrk 2 threads, ${LEARN_CONNECTIONS} connections," \
            "${LEARN_DURATION} s per case after $LEARN_WARM requests and ${WARMUP} s of warm-up" \
            "(learning on: its dictionary built and served); learning on (the default) against" \
            "\`--no-learn\`, alternating, ${LEARN_ROUNDS} rounds. CPU: the server's per request" \
            "(in parentheses, its learner thread's part); off/on CPU is the requests/s ratio the" \
            "core would give if it were the server's alone; core use: the server's CPU time over" \
            "the run's wall time (under ~90%, other processes had the core)."
        echo
        echo "| round | on req/s | off req/s | on/off req/s | on p99 ms | off p99 ms | on CPU us/req (learner) | off CPU us/req | off/on CPU | core use on / off |"
        echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        for ((round = 1; round <= LEARN_ROUNDS; round++)); do
            learn_row "$round"
        done
        learn_row median
        echo
        echo "Samples taken per run (learning on): median $(learn_med on taken)," \
            "dropped (queue full) $(learn_med on dropped)."
        echo "Targets: the medians of the per-round on/off requests/s and off/on CPU ratios" \
            ">= $LEARN_MIN_RATIO ($verdict: $rps_ratio and $cpu_ratio)."
    } >"$table"
    cat "$table"
    mkdir -p "$(dirname "$OUT")"
    cp "$table" "${OUT%.md}-learn.md"
    log "learn results written to ${OUT%.md}-learn.md"
    if [[ "$verdict" != pass ]]; then
        log "error: learning on: $rps_ratio x the requests/s of learning off, $cpu_ratio x" \
            "its requests per CPU second (either under $LEARN_MIN_RATIO)"
        exit 1
    fi
}

learn_section
