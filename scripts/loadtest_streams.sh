#!/usr/bin/env bash
# shellcheck disable=SC2034  # result arrays are read through namerefs in the report helpers
# Loopback "concurrent streams" load test: what in-flight compressed responses cost the
# server in memory, the demo server with our layers against the same server with
# tower-http's (`--baseline tower-http`), over 127.0.0.1 only. Measurement only.
#
#   scripts/loadtest_streams.sh                        # all sections, ~8 min
#   SECTIONS=concurrent scripts/loadtest_streams.sh    # one section (concurrent, slow, idle, busy, whole)
#   ENCODINGS=zstd scripts/loadtest_streams.sh         # one coding only
#
# Every compressed case runs once per coding C in ENCODINGS (`Accept-Encoding: C`), ours and
# tower-http side by side; the identity reference cases run once, not per coding.
# Sections:
#   concurrent  h2load -m 1 -n REQUESTS -c C (C in CONCURRENCY) against
#               /big.txt?size=BIG_SIZE with `Accept-Encoding: CODING`, over HTTP/1.1 (--h1)
#               and h2c (prior knowledge), ours and tower-http, per coding; once with the
#               server and h2load pinned apart (see below) and once unpinned, both sharing
#               both cores as users run servers (CONCURRENT_CORES, "pinned unpinned").
#   slow        SLOW_CONNS raw HTTP/1.1 sockets (`loadgen slow`, SO_RCVBUF 16 KiB)
#               each reading the same response at SLOW_RATE bytes/s for SLOW_SECONDS: ours
#               with identity (the floor), then ours and tower-http with each coding.
#   idle        IDLE_CONNS open SSE responses (/events?n=1000&interval_ms=5000,
#               `loadgen idle`) held for IDLE_SECONDS: ours with identity
#               (reference), then ours and tower-http with each coding.
#   busy        S SSE responses (S in BUSY_STREAMS) with an event every I ms (I in
#               BUSY_INTERVALS), read to their end (`loadgen events`): ours with
#               identity, then ours with each coding; server CPU per event, and over
#               identity's. Each stream sends BUSY_SECONDS worth of events, at most
#               BUSY_EVENTS over all streams (at 1 ms, 256 streams ask more than 2 cores do).
#               I up to 10000: pauses over a second release the state and prime it again.
#   whole       ~1 MB JSON bodies known in full (/api/items), `Accept-Encoding: gzip,
#               deflate, br`: see scripts/loadtest_whole.sh (WHOLE_CONNS, WHOLE_ITEMS,
#               WHOLE_ROUNDS).
#
# Checks (exit 1): concurrent gzip/zstd RSS growth over MAX_GROWTH (2.0) x tower-http's;
# whole's median RSS growth over MAX_WHOLE_GROWTH (3.0) x tower-http's.
# Env: SECTIONS (comma list, default concurrent,slow,idle,busy,whole), ENCODINGS (space or comma list
# of gzip, zstd, br, deflate; default "gzip zstd br"), REQUESTS (400),
# CONCURRENCY ("64 256"), CONCURRENT_CORES ("pinned unpinned"), BIG_SIZE (1000000), SLOW_CONNS (256), SLOW_RATE (16384),
# SLOW_SECONDS (10), IDLE_CONNS (1000), IDLE_SECONDS (15), IDLE_CHECKPOINT (5),
# BUSY_STREAMS ("8 256"), BUSY_INTERVALS ("1 100"), BUSY_SECONDS (4), BUSY_EVENTS (100000),
# POLL_MS (/stats sampling period, 200), OUT (markdown results file, default
# target/loadtest/streams.md).
#
# Every case starts a fresh server (ADDR=127.0.0.1:0), so that VmHWM (monotonic) covers that
# case alone: "RSS growth" is VmHWM after the load minus VmRSS right before it (idle: VmRSS
# at the checkpoints minus VmRSS before). While a case runs, our /stats is sampled every
# POLL_MS with curl and the maximum number of live codec states (pool `in_use`, summed over
# compressors, block compressors and decompressors) is kept; tower-http has no pool: n/a.
# The server is pinned to core 0 and the clients to core 1 when `taskset` exists and there
# are at least 2 CPUs (but for the unpinned concurrent cases). The raw-socket loads (slow,
# idle, busy) are `loadgen` subcommands (bench/src/bin/loadgen.rs). Every client run is
# bounded (timeout); the script kills only the processes it started (scripts/lib.sh's
# trap on EXIT).
set -euo pipefail

SECTIONS="${SECTIONS:-concurrent,slow,idle,busy,whole}"
ENCODINGS="${ENCODINGS:-gzip zstd br}"
REQUESTS="${REQUESTS:-400}"
CONCURRENCY="${CONCURRENCY:-64 256}"
CONCURRENT_CORES="${CONCURRENT_CORES:-pinned unpinned}"
BIG_SIZE="${BIG_SIZE:-1000000}"
SLOW_CONNS="${SLOW_CONNS:-256}"
SLOW_RATE="${SLOW_RATE:-16384}"
SLOW_SECONDS="${SLOW_SECONDS:-10}"
IDLE_CONNS="${IDLE_CONNS:-1000}"
IDLE_SECONDS="${IDLE_SECONDS:-15}"
IDLE_CHECKPOINT="${IDLE_CHECKPOINT:-5}"
POLL_MS="${POLL_MS:-200}"
BUSY_STREAMS="${BUSY_STREAMS:-8 256}"
BUSY_INTERVALS="${BUSY_INTERVALS:-1 100}"
BUSY_SECONDS="${BUSY_SECONDS:-4}"
BUSY_EVENTS="${BUSY_EVENTS:-100000}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT="${OUT:-$ROOT/target/loadtest/streams.md}"

# --- knobs -------------------------------------------------------------------------------
knob REQUESTS 1 100000
knob BIG_SIZE 1 268435456
knob SLOW_CONNS 1 4096
knob SLOW_RATE 1 104857600
knob SLOW_SECONDS 1 300
knob IDLE_CONNS 1 10000
knob IDLE_SECONDS 1 300
knob IDLE_CHECKPOINT 0 300
knob POLL_MS 50 10000
knob BUSY_SECONDS 1 60
knob BUSY_EVENTS 100 1000000
for v in $BUSY_STREAMS; do
    [[ "$v" =~ ^[0-9]+$ ]] && ((v >= 1 && v <= 4096)) || die "BUSY_STREAMS entries must be integers in 1..4096, got '$v'"
done
for v in $BUSY_INTERVALS; do
    [[ "$v" =~ ^[0-9]+$ ]] && ((v >= 1 && v <= 10000)) || die "BUSY_INTERVALS entries must be integers in 1..10000, got '$v'"
done
for c in $CONCURRENCY; do
    if ! [[ "$c" =~ ^[0-9]+$ ]] || ((c < 1 || c > 4096 || c > REQUESTS)); then
        die "CONCURRENCY entries must be integers in 1..min(4096, REQUESTS), got '$c'"
    fi
done
((IDLE_CHECKPOINT <= IDLE_SECONDS)) || die "IDLE_CHECKPOINT must not exceed IDLE_SECONDS"
read -r -a ENCS <<<"${ENCODINGS//,/ }"
((${#ENCS[@]} > 0)) || die "ENCODINGS selects nothing"
declare -A _seen=()
for e in "${ENCS[@]}"; do
    case "$e" in
        gzip | zstd | br | deflate) ;;
        identity) die "ENCODINGS: identity is the reference case, always run once (slow, idle)" ;;
        *) die "ENCODINGS entries must be gzip, zstd, br or deflate, got '$e'" ;;
    esac
    [[ -z "${_seen[$e]:-}" ]] || die "ENCODINGS lists '$e' twice"
    _seen[$e]=1
done
unset _seen
declare -A RUN=()
IFS=',' read -r -a _sections <<<"$SECTIONS"
for s in "${_sections[@]}"; do
    s="${s// /}"
    case "$s" in
        concurrent | slow | idle | busy | whole) RUN[$s]=1 ;;
        all) RUN[concurrent]=1 RUN[slow]=1 RUN[idle]=1 RUN[busy]=1 RUN[whole]=1 ;;
        "") ;;
        *) die "unknown section '$s' in SECTIONS (concurrent, slow, idle, busy, whole)" ;;
    esac
done
((${#RUN[@]} > 0)) || die "SECTIONS selects nothing"
POLL_S="$(awk -v ms="$POLL_MS" 'BEGIN { printf "%.3f", ms / 1000 }')"

# --- tools -------------------------------------------------------------------------------
if [[ -n "${RUN[concurrent]:-}${RUN[whole]:-}" ]]; then
    need h2load nghttp2-client
fi
command -v curl >/dev/null || die "curl is required"
command -v python3 >/dev/null || die "python3 is required"

pin_cores

# Enough descriptors for IDLE_CONNS sockets, in this shell and so in the server it starts.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE="$(ulimit -n)"
if [[ -n "${RUN[idle]:-}" && "$NOFILE" != unlimited ]] && ((NOFILE < IDLE_CONNS + 64)); then
    die "open-file limit $NOFILE is too low for IDLE_CONNS=$IDLE_CONNS (hard limit $(ulimit -Hn))"
fi

# --- build -------------------------------------------------------------------------------
build_demo --features metrics
if [[ -n "${RUN[slow]:-}${RUN[idle]:-}${RUN[busy]:-}" ]]; then
    build_loadgen
fi

# Live codec states from a /stats body on stdin: the pool's `in_use` summed over its kinds,
# or nothing for a server without our pool (tower-http reports mode "tower-http").
live_states() {
    local body
    body="$(cat)"
    [[ "$body" == *'"mode":"tower-gzip"'* ]] || return 0
    grep -oE '"in_use": *[0-9]+' <<<"$body" | awk -F: '{ s += $2 } END { if (NR) print s }'
}

# Samples /stats every POLL_S into $1 (one number per line) until killed.
start_poller() {
    : >"$1"
    (
        while :; do
            curl -sS --max-time 2 "$BASE/stats" 2>/dev/null | live_states >>"$1" || true
            sleep "$POLL_S"
        done
    ) &
    POLLER_PID=$!
}

# Stops the poller; prints the largest sample, or n/a without samples.
stop_poller() { # $1: the poller's file
    kill "$POLLER_PID" 2>/dev/null || true
    wait "$POLLER_PID" 2>/dev/null || true
    POLLER_PID=""
    sort -n "$1" | tail -n 1 | grep -E '^[0-9]+$' || echo "n/a"
}

# h2load durations "123us" / "1.23ms" / "1.02s" -> milliseconds (h2load prints 2 decimals in
# its own unit, so "1.12s" is 1120 ms to 10 ms at best: 3 significant digits are shown).
to_ms() {
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) { sub(/us$/, "", v); ms = v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); ms = v + 0 }
        else if (v ~ /s$/) { sub(/s$/, "", v); ms = v * 1000 }
        else { printf "n/a"; exit }
        if (ms >= 100) printf "%.0f", ms; else if (ms >= 10) printf "%.1f", ms; else printf "%.2f", ms
    }'
}

# Field $2 (1: min, 2: max, 3: mean) of h2load's "$1:" timing line in file $3, in ms.
h2load_time() {
    to_ms "$(awk -v label="$1" -v f="$2" 'index($0, label ":") == 1 {
        rest = substr($0, length(label) + 2); split(rest, v, " "); print v[f]; exit
    }' "$3")"
}

BIG_PATH="/big.txt?size=$BIG_SIZE"
SERVERS=(ours tower-http)
PROTOS=(h1 h2c)
# shellcheck source=scripts/loadtest_whole.sh
source "$ROOT/scripts/loadtest_whole.sh"

# --- concurrent streams ------------------------------------------------------------------
# The Content-Encoding of one `GET $BIG_PATH` with `Accept-Encoding: $1` (curl, HTTP/1.1),
# "none" without one, "n/a" if curl failed: a check that the coding asked for is served.
served_encoding() {
    local head
    head="$(curl -sS --max-time 30 -o /dev/null -D - -H "Accept-Encoding: $1" "$BASE$BIG_PATH" 2>/dev/null)" ||
        { echo "n/a"; return 0; }
    awk -F': *' 'tolower($1) == "content-encoding" { v = $2; gsub(/\r/, "", v) }
        END { print (v == "" ? "none" : v) }' <<<"$head"
}

declare -A C_RSS0 C_GROW C_LIVE C_OK C_TTFB C_TTFBMAX C_REQ C_REQMAX C_WALL C_CE C_BODY
run_concurrent() { # $1: pinned | unpinned, $2: h1 | h2c, $3: concurrency, $4: coding, $5: server
    local pin=$1 proto=$2 c=$3 enc=$4 server=$5 key="$1/$2/$3/$4/$5" tag="$1-$2-$3-$4-$5" rss0 hwm0 hwm1
    local out="$WORK/h2load-$tag.txt" proto_args=() spin=("${SERVER_PIN[@]}") cpin=("${CLIENT_PIN[@]}")
    [[ "$proto" == h1 ]] && proto_args=(--h1)
    # Unpinned: the server and h2load share both cores, as users run servers.
    [[ "$pin" == unpinned ]] && SERVER_PIN=() CLIENT_PIN=()
    start_server "$server"
    rss0="$(proc_status_kb VmRSS)"
    hwm0="$(proc_status_kb VmHWM)"
    log "== concurrent: $pin, $proto, -c $c -n $REQUESTS, $enc, $server (VmRSS $rss0 KiB, VmHWM $hwm0 KiB)"
    start_poller "$WORK/live-$tag"
    "${CLIENT_PIN[@]}" timeout 300 h2load "${proto_args[@]}" -c "$c" -n "$REQUESTS" -m 1 -t 1 \
        -H "Accept-Encoding: $enc" "$BASE$BIG_PATH" >"$out" 2>&1 ||
        log "warning: h2load exited with status $? ($proto, $c, $enc, $server)"
    hwm1="$(proc_status_kb VmHWM)"
    C_LIVE[$key]="$(stop_poller "$WORK/live-$tag")"
    # After the peak is read, so this extra request is not part of it.
    C_CE[$key]="$(served_encoding "$enc")"
    stop_server
    SERVER_PIN=("${spin[@]}") CLIENT_PIN=("${cpin[@]}")
    grep -E '^(finished|requests:|status codes:|time for request:|time to 1st byte:)' "$out" >&2 || true
    C_RSS0[$key]="$rss0"
    C_GROW[$key]="$(diff_kb "$hwm1" "$rss0")"
    C_OK[$key]="$(awk '/^requests:/ { for (i = 2; i <= NF; i++) if ($i ~ /^succeeded/) { print $(i - 1); exit } }' "$out")"
    C_OK[$key]="${C_OK[$key]:-n/a}"
    # Mean response body on the wire: h2load's "traffic: ... (N) data" over the successes.
    C_BODY[$key]="$(awk -v ok="${C_OK[$key]}" '/^traffic:/ {
        for (i = 2; i <= NF; i++) if ($i == "data" && $(i - 1) ~ /^\([0-9]+\)$/) {
            d = $(i - 1); gsub(/[()]/, "", d)
            if (ok + 0 > 0) printf "%.1f", d / ok / 1024; else printf "n/a"
            found = 1; exit
        }
    } END { if (!found) printf "n/a" }' "$out")"
    C_TTFB[$key]="$(h2load_time "time to 1st byte" 3 "$out")"
    C_TTFBMAX[$key]="$(h2load_time "time to 1st byte" 2 "$out")"
    C_REQ[$key]="$(h2load_time "time for request" 3 "$out")"
    C_REQMAX[$key]="$(h2load_time "time for request" 2 "$out")"
    C_WALL[$key]="$(awk -v ms="$(to_ms "$(awk '/^finished in/ { v = $3; sub(/,$/, "", v); print v; exit }' "$out")")" \
        'BEGIN { if (ms ~ /^[0-9.]+$/) printf "%.1f", ms / 1000; else printf "n/a" }')"
}

# "ours-CODING" | "tower-http-CODING" (CODING: identity or one of ENCODINGS) -> "SERVER CODING"
case_parts() {
    local server=ours
    [[ "$1" == tower-http-* ]] && server=tower-http
    echo "$server ${1##*-}"
}

# Cases of the slow and idle sections: the identity reference once, then ours and
# tower-http with each coding.
CASES=(ours-identity)
for e in "${ENCS[@]}"; do
    CASES+=("ours-$e" "tower-http-$e")
done

# --- slow readers --------------------------------------------------------------------------
declare -A S_RSS0 S_GROW S_LIVE S_OPEN S_ENC S_DONE S_READ S_ERR
run_slow() { # $1: a case (see CASES)
    local case=$1 server enc out="$WORK/slow-$1.json" rss0 hwm1
    read -r server enc <<<"$(case_parts "$case")"
    start_server "$server"
    rss0="$(proc_status_kb VmRSS)"
    log "== slow readers: $SLOW_CONNS x $BIG_PATH ($enc) at $SLOW_RATE B/s for ${SLOW_SECONDS}s, $server (VmRSS $rss0 KiB)"
    start_poller "$WORK/live-slow-$1"
    "${CLIENT_PIN[@]}" timeout $((SLOW_SECONDS + 60)) "$LOADGEN" slow "$BASE" \
        --path "$BIG_PATH" --conns "$SLOW_CONNS" --rate "$SLOW_RATE" --seconds "$SLOW_SECONDS" \
        --rcvbuf 16384 --encoding "$enc" --setup-timeout 30 >"$out" ||
        log "warning: loadgen slow exited with status $? ($case)"
    hwm1="$(proc_status_kb VmHWM)"
    S_LIVE[$case]="$(stop_poller "$WORK/live-slow-$1")"
    stop_server
    [[ -s "$out" ]] || echo '{}' >"$out"
    cat "$out" >&2
    S_RSS0[$case]="$rss0"
    S_GROW[$case]="$(diff_kb "$hwm1" "$rss0")"
    S_OPEN[$case]="$(json_field status_200 "$out")"
    S_ENC[$case]="$(json_field encoded "$out")"
    S_DONE[$case]="$(json_field complete "$out")"
    S_READ[$case]="$(json_field bytes_per_conn_mean "$out")"
    S_ERR[$case]="$(json_field errors "$out")"
}

# --- idle streams --------------------------------------------------------------------------
declare -A I_RSS0 I_GROW5 I_GROWEND I_LIVE I_OPEN I_ENC I_END I_BYTES
run_idle() { # $1: a case (see CASES)
    local case=$1 server enc out="$WORK/idle-$1.json" rss0 path
    path="/events?n=1000&interval_ms=5000"
    read -r server enc <<<"$(case_parts "$case")"
    start_server "$server"
    rss0="$(proc_status_kb VmRSS)"
    log "== idle streams: $IDLE_CONNS x $path ($enc) held ${IDLE_SECONDS}s, $server (VmRSS $rss0 KiB)"
    start_poller "$WORK/live-idle-$1"
    "${CLIENT_PIN[@]}" timeout $((IDLE_SECONDS + 90)) "$LOADGEN" idle "$BASE" \
        --path "$path" --conns "$IDLE_CONNS" --hold "$IDLE_SECONDS" --checkpoint "$IDLE_CHECKPOINT" \
        --encoding "$enc" --pid "$SERVER_PID" --setup-timeout 60 >"$out" ||
        log "warning: loadgen idle exited with status $? ($case)"
    I_LIVE[$case]="$(stop_poller "$WORK/live-idle-$1")"
    stop_server
    [[ -s "$out" ]] || echo '{}' >"$out"
    cat "$out" >&2
    I_RSS0[$case]="$rss0"
    I_GROW5[$case]="$(diff_kb "$(json_field rss_checkpoint_kib "$out")" "$rss0")"
    I_GROWEND[$case]="$(diff_kb "$(json_field rss_end_kib "$out")" "$rss0")"
    I_OPEN[$case]="$(json_field status_200 "$out")"
    I_ENC[$case]="$(json_field encoded "$out")"
    I_END[$case]="$(json_field open_at_end "$out")"
    I_BYTES[$case]="$(json_field event_bytes_per_stream_mean "$out")"
}

# shellcheck source=scripts/loadtest_busy.sh
source "$ROOT/scripts/loadtest_busy.sh"

# --- runs ----------------------------------------------------------------------------------
read -r -a CONCS <<<"$CONCURRENCY"
read -r -a PINS <<<"${CONCURRENT_CORES//,/ }"
for p in "${PINS[@]}"; do
    [[ "$p" == pinned || "$p" == unpinned ]] || die "CONCURRENT_CORES entries must be pinned or unpinned, got '$p'"
done
if [[ -n "${RUN[concurrent]:-}" ]]; then
    for pin in "${PINS[@]}"; do
        for proto in "${PROTOS[@]}"; do
            for c in "${CONCS[@]}"; do
                for enc in "${ENCS[@]}"; do
                    for server in "${SERVERS[@]}"; do
                        run_concurrent "$pin" "$proto" "$c" "$enc" "$server"
                    done
                done
            done
        done
    done
fi
# The identity case is the floor: what the same connections cost the server with no
# compression at all (hyper's buffers, the handler's chunks, malloc's arenas).
if [[ -n "${RUN[slow]:-}" ]]; then
    for case in "${CASES[@]}"; do
        run_slow "$case"
    done
fi
if [[ -n "${RUN[idle]:-}" ]]; then
    for case in "${CASES[@]}"; do
        run_idle "$case"
    done
fi

if [[ -n "${RUN[whole]:-}" ]]; then
    whole_section
    whole_medians
fi

read -r -a BUSY_S <<<"$BUSY_STREAMS"
read -r -a BUSY_I <<<"$BUSY_INTERVALS"
if [[ -n "${RUN[busy]:-}" ]]; then
    for conns in "${BUSY_S[@]}"; do
        for ms in "${BUSY_I[@]}"; do
            for enc in identity "${ENCS[@]}"; do
                run_busy "$conns" "$ms" "$enc"
            done
        done
    done
fi

# --- report --------------------------------------------------------------------------------
server_name() { [[ "$1" == ours ]] && echo "tower-gzip" || echo "$1"; }
proto_name() { [[ "$1" == h1 ]] && echo "HTTP/1.1" || echo "$1"; }
{
    echo "Loopback streams load, $(date -u +%Y-%m-%d), commit" \
        "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown);" \
        "demo server (\`CompressionLevel::Default\`: gzip level 6, \`RUST_LOG=warn\`) started" \
        "fresh for every case; codings: ${ENCS[*]}; $PINNING (but the unpinned concurrent cases);" \
        "open-file limit $NOFILE; $(nproc) CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)." \
        "RSS growth: server VmHWM after the load minus VmRSS right before it (idle: VmRSS at" \
        "the checkpoint minus VmRSS before). Live codec states: the maximum of our /stats pool" \
        "\`in_use\` (all kinds), sampled every ${POLL_MS} ms; tower-http has no pool (n/a)." \
        "Ratios ours/tower-http compare the two servers with the same coding (and protocol, C)."
    if [[ -n "${RUN[concurrent]:-}" ]]; then
        echo
        echo "### Concurrent streams"
        echo
        echo "\`h2load -m 1 -t 1 -n $REQUESTS -c C -H 'Accept-Encoding: CODING'\` on \`$BIG_PATH\`" \
            "(HTTP/1.1: \`--h1\`; h2c: prior knowledge), $(h2load --version 2>/dev/null | head -n 1)." \
            "h2load's \"time to 1st byte\" is per connection (from its connect), \"time for request\"" \
            "per request; wall: the whole run. Served: the Content-Encoding of one more request" \
            "(curl, HTTP/1.1) after the load; body: h2load's data bytes per succeeded response."
        echo
        echo "| cores | protocol | C | coding | server | served | RSS before (KiB) | peak RSS growth (KiB) | growth ours/tower-http | max live codec states | succeeded | body (KiB) | TTFB mean (ms) | TTFB mean ours/tower-http | TTFB max (ms) | request mean (ms) | request max (ms) | wall (s) |"
        echo "|---|---|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        for pin in "${PINS[@]}"; do
        for proto in "${PROTOS[@]}"; do
            for c in "${CONCS[@]}"; do
                for enc in "${ENCS[@]}"; do
                    for server in "${SERVERS[@]}"; do
                        k="$pin/$proto/$c/$enc/$server"
                        theirs="$pin/$proto/$c/$enc/tower-http"
                        r="" rt=""
                        if [[ "$server" == ours ]]; then
                            r="$(ratio "${C_GROW[$k]}" "${C_GROW[$theirs]}")"
                            rt="$(ratio "${C_TTFB[$k]}" "${C_TTFB[$theirs]}")"
                        fi
                        echo "| $pin | $(proto_name "$proto") | $c | $enc | $(server_name "$server") | ${C_CE[$k]} |" \
                            "${C_RSS0[$k]} | ${C_GROW[$k]} | $r | ${C_LIVE[$k]} | ${C_OK[$k]}/$REQUESTS |" \
                            "${C_BODY[$k]} | ${C_TTFB[$k]} | $rt | ${C_TTFBMAX[$k]} |" \
                            "${C_REQ[$k]} | ${C_REQMAX[$k]} | ${C_WALL[$k]} |"
                    done
                done
            done
        done
        done
    fi
    if [[ -n "${RUN[slow]:-}" ]]; then
        echo
        echo "### Slow readers"
        echo
        echo "$SLOW_CONNS raw HTTP/1.1 connections (\`loadgen slow\`, SO_RCVBUF 16 KiB)," \
            "each \`GET $BIG_PATH\` with \`Accept-Encoding: CODING\` (identity, once: the floor," \
            "the same connections with no compression), read at $SLOW_RATE B/s for" \
            "$SLOW_SECONDS s, then closed. \"Over identity\": growth minus the floor's, what" \
            "compression itself costs."
        echo
        echo "| coding | server | RSS before (KiB) | peak RSS growth (KiB) | growth ours/tower-http | over identity (KiB) | over identity ours/tower-http | max live codec states | 200 / encoded | complete | bytes read per connection | errors |"
        echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
        floor="${S_GROW[ours-identity]}"
        for case in "${CASES[@]}"; do
            read -r server enc <<<"$(case_parts "$case")"
            r="" over="" r_over=""
            if [[ "$enc" != identity ]]; then
                over="$(diff_kb "${S_GROW[$case]}" "$floor")"
                if [[ "$server" == ours ]]; then
                    theirs="tower-http-$enc"
                    r="$(ratio "${S_GROW[$case]}" "${S_GROW[$theirs]}")"
                    r_over="$(ratio "$over" "$(diff_kb "${S_GROW[$theirs]}" "$floor")")"
                fi
            fi
            echo "| $enc | $(server_name "$server") | ${S_RSS0[$case]} | ${S_GROW[$case]} | $r | $over | $r_over |" \
                "${S_LIVE[$case]} | ${S_OPEN[$case]} / ${S_ENC[$case]} | ${S_DONE[$case]} | ${S_READ[$case]} | ${S_ERR[$case]} |"
        done
    fi
    if [[ -n "${RUN[idle]:-}" ]]; then
        echo
        echo "### Idle streams"
        echo
        echo "$IDLE_CONNS SSE responses (\`loadgen idle\`, \`/events?n=1000&interval_ms=5000\`," \
            "one event every 5 s) with \`Accept-Encoding: CODING\` (identity once, the reference)" \
            "opened, held for $IDLE_SECONDS s, then closed; RSS growth" \
            "$IDLE_CHECKPOINT s into the hold and at its end. Encoded: responses with" \
            "Content-Encoding CODING (tower-http's default predicate does not compress" \
            "\`text/event-stream\`)."
        echo
        echo "| coding | server | RSS before (KiB) | growth after ${IDLE_CHECKPOINT} s (KiB) | growth at end (KiB) | per stream at end (KiB) | end ours/tower-http | end / identity | max live codec states | 200 / encoded | open at end | event bytes per stream |"
        echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        for case in "${CASES[@]}"; do
            read -r server enc <<<"$(case_parts "$case")"
            r="" ri=""
            if [[ "$enc" != identity ]]; then
                ri="$(ratio "${I_GROWEND[$case]}" "${I_GROWEND[ours-identity]}")"
                [[ "$server" == ours ]] && r="$(ratio "${I_GROWEND[$case]}" "${I_GROWEND[tower-http-$enc]}")"
            fi
            per="$(awk -v g="${I_GROWEND[$case]}" -v n="${I_OPEN[$case]}" \
                'BEGIN { if (g ~ /^-?[0-9]+$/ && n + 0 > 0) printf "%.1f", g / n; else printf "n/a" }')"
            echo "| $enc | $(server_name "$server") | ${I_RSS0[$case]} | ${I_GROW5[$case]} | ${I_GROWEND[$case]} | $per | $r | $ri |" \
                "${I_LIVE[$case]} | ${I_OPEN[$case]} / ${I_ENC[$case]} | ${I_END[$case]} | ${I_BYTES[$case]} |"
        done
    fi
    if [[ -n "${RUN[busy]:-}" ]]; then
        busy_report
    fi
    if [[ -n "${RUN[whole]:-}" ]]; then
        whole_report
    fi
} | tee "$WORK/results.md"
mkdir -p "$(dirname "$OUT")"
cp "$WORK/results.md" "$OUT"
log "results written to $OUT"

# The check: concurrent gzip and zstd downloads may grow the server's RSS by at most
# MAX_GROWTH (default 2.0) times tower-http's, per protocol and concurrency (br waits for
# turns and is reported only). Exits 1 when a case is over, so a regression cannot pass
# unnoticed.
over=0
if [[ -n "${RUN[whole]:-}" ]]; then
    whole_check || over=1
fi
if [[ -n "${RUN[concurrent]:-}" ]]; then
    c_over=0
    for pin in "${PINS[@]}"; do
        for proto in "${PROTOS[@]}"; do
            for c in "${CONCS[@]}"; do
                for enc in "${ENCS[@]}"; do
                    [[ "$enc" == br ]] && continue
                    k="$pin/$proto/$c/$enc"
                    r="$(ratio "${C_GROW[$k/ours]}" "${C_GROW[$k/tower-http]}")"
                    if awk -v r="$r" -v m="${MAX_GROWTH:-2.0}" 'BEGIN { exit !(r + 0 > m + 0) }'; then
                        log "check failed: $pin, $(proto_name "$proto"), $c connections, $enc: RSS growth ${r}x tower-http's (limit ${MAX_GROWTH:-2.0}x)"
                        c_over=1
                    fi
                done
            done
        done
    done
    if ((c_over == 0)); then
        log "check passed: concurrent RSS growth within ${MAX_GROWTH:-2.0}x tower-http's"
    fi
    ((c_over == 0)) || over=1
fi
((over == 0)) || exit 1
