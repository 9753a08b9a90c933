# What the load, soak and profiling scripts share (sourced, after `set -euo pipefail`):
# logging, knobs, tools installed on demand, core pinning, the demo built and started on a
# free loopback port, /proc readings of it, the load generator, figures (median, ratio) and
# one EXIT trap that stops what the script started.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Defines ROOT (the repository), WORK (a fresh temporary directory, removed on exit),
# BIN (after build_demo), SERVER_PID and BASE (after start_server: one server at a time),
# SERVER_PIN / CLIENT_PIN / PINNING (after pin_cores), LOADGEN (after build_loadgen).
# The trap kills only the processes the script started, by their ids.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")"
BIN=""
BASE=""
SERVER_PID=""
POLLER_PID=""
SERVER_PREFIX=()
SERVER_PIN=()
CLIENT_PIN=()
PINNING="not pinned"
START_TIMEOUT="${START_TIMEOUT:-30}"

log() { printf '%s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Stops the background process whose id is in the variable named $1, and clears it.
stop_pid() {
    local -n pid_ref=$1
    local pid="$pid_ref" i
    pid_ref=""
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

lib_cleanup() {
    stop_pid POLLER_PID
    stop_pid SERVER_PID
    rm -rf "$WORK"
}
trap lib_cleanup EXIT

# knob NAME MIN MAX: the variable NAME must hold an integer within [MIN, MAX].
knob() {
    local v="${!1}"
    if ! [[ "$v" =~ ^[0-9]+$ ]] || ((v < $2 || v > $3)); then
        die "$1 must be an integer in $2..$3, got '$v'"
    fi
}

# need TOOL [PACKAGE]: TOOL on the PATH, installed with apt-get (package PACKAGE, default
# TOOL) when it is missing and apt-get exists.
need() {
    local tool=$1 package=${2:-$1}
    command -v "$tool" >/dev/null && return 0
    if command -v apt-get >/dev/null; then
        log "$tool not found: installing $package with apt-get"
        (apt-get install -y -qq "$package" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 &&
                apt-get install -y -qq "$package" >/dev/null 2>&1; }) || true
    fi
    command -v "$tool" >/dev/null || die "$tool is required (apt-get install $package)"
}

# pin_cores [CLIENT_NAME]: the server on core 0 and the clients on core 1 (SERVER_PIN,
# CLIENT_PIN, for "${SERVER_PIN[@]}" prefixes) when `taskset` exists and there are at least
# 2 CPUs; PINNING says which.
pin_cores() {
    SERVER_PIN=() CLIENT_PIN=()
    PINNING="not pinned (taskset unavailable or fewer than 2 CPUs)"
    if command -v taskset >/dev/null && [[ "$(nproc)" -ge 2 ]]; then
        SERVER_PIN=(taskset -c 0)
        CLIENT_PIN=(taskset -c 1)
        PINNING="server pinned to core 0, ${1:-clients} to core 1 (taskset)"
    fi
}

# build_demo [CARGO FLAGS...]: the demo server in release (into CARGO_TARGET_DIR if set); BIN.
build_demo() {
    log "building the demo server (release)"
    (cd "$ROOT" && cargo build --release --example server --quiet "$@")
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/server"
}

# build_loadgen: the raw-socket load generator (bench/src/bin/loadgen.rs); LOADGEN.
build_loadgen() {
    log "building the load generator (release)"
    (cd "$ROOT" && cargo build --release -p tower-gzip-bench --bin loadgen --quiet)
    LOADGEN="${CARGO_TARGET_DIR:-$ROOT/target}/release/loadgen"
}

# start_server ours|tower-http [FLAGS...]: the demo ($BIN) on a free loopback port
# (ADDR=127.0.0.1:0, RUST_LOG=warn), through SERVER_PREFIX (valgrind, say) and
# SERVER_PIN; tower-http adds `--baseline tower-http`. Waits up to START_TIMEOUT seconds
# for its `listening on http://...` line; sets SERVER_PID and BASE. Its stdout goes to
# $WORK/stdout, its stderr is appended to $WORK/stderr-NAME.
start_server() {
    local name=$1 args=("${@:2}") line="" i
    [[ "$name" == tower-http ]] && args=(--baseline tower-http "${args[@]}")
    : >"$WORK/stdout"
    ADDR=127.0.0.1:0 RUST_LOG=warn "${SERVER_PIN[@]}" "${SERVER_PREFIX[@]}" "$BIN" "${args[@]}" \
        >"$WORK/stdout" 2>>"$WORK/stderr-$name" &
    SERVER_PID=$!
    for ((i = 0; i < START_TIMEOUT * 10; i++)); do
        line="$(head -n 1 "$WORK/stdout" 2>/dev/null || true)"
        [[ "$line" == "listening on http://"* ]] && break
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            log "error: the server exited; stderr:"
            tail -n 50 "$WORK/stderr-$name" >&2
            exit 1
        fi
        sleep 0.1
    done
    [[ "$line" == "listening on http://"* ]] || die "the server did not start in $START_TIMEOUT s"
    BASE="${line#listening on }"
}

stop_server() { stop_pid SERVER_PID; }

# warm_from_clients URL_BASE LAST_START TIMEOUT ACCEPT_ENCODING: the API's items from seven
# loopback addresses at once (127.0.0.2-.8; curl's URL globbing, disjoint starts), so that
# the learner, which publishes only what 3 distinct clients were sent and samples 1 in 4,
# sees enough clients. Waits for the seven curls, not for the server.
warm_from_clients() {
    local url=$1 last=$2 max_time=$3 ae=$4 pids=() c
    for c in 0 1 2 3 4 5 6; do
        curl -sS --max-time "$max_time" --interface "127.0.0.$((2 + c))" -H "Accept-Encoding: $ae" \
            "$url&start=[$((c * 1000))-$last:7000]" >/dev/null &
        pids+=($!)
    done
    wait "${pids[@]}"
}

# A `kB` field of the server's /proc/PID/status (VmRSS, VmHWM), in KiB.
proc_status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SERVER_PID/status"; }
# utime+stime in clock ticks, and minor faults, of the server (from /proc/PID/stat).
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat"; }
proc_minflt() { awk '{ print $10 }' "/proc/$SERVER_PID/stat"; }

# The median of the numeric arguments (n/a when there are none); integers stay integers.
median() {
    printf '%s\n' "$@" | { grep -E '^-?[0-9.]+$' || true; } | sort -g |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "n/a"; exit }
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            if (m == int(m)) printf "%d\n", m; else printf "%.6g\n", m
        }'
}

# $1 / $2 to 2 decimals, "-" unless both are numbers and $2 is positive.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a ~ /^-?[0-9.]+$/ && b ~ /^-?[0-9.]+$/ && b + 0 > 0) printf "%.2f", a / b; else printf "-"
    }'
}

# $1 - $2 (KiB), n/a unless both are integers.
diff_kb() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) print a - b; else print "n/a" }'; }
# KiB to MiB, one decimal.
mib() { awk -v k="$1" 'BEGIN { if (k ~ /^-?[0-9]+$/) printf "%.1f", k / 1024; else printf "n/a" }'; }

# A field (dotted path) of the JSON object in file $2, "n/a" when absent (python3, so no
# jq is needed).
json_field() {
    python3 -c '
import json, sys
v = json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("n/a" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))
' "$1" "$2"
}
