#!/usr/bin/env bash
# Instructions a request costs the demo's runtime with learning on and off, under callgrind.
#
#   scripts/profile_learn.sh            # REQUESTS=20000 CONNECTIONS=32
#
# Builds the demo (release, with debug info) into target/profile-learn (PROFILE_TARGET_DIR), starts it under
# valgrind's callgrind for each side, sends 2,000 requests first (the learned side builds and
# serves its dictionary), warms up with 4,000 more, zeroes the counters and sends REQUESTS
# (h2load over HTTP/1.1, distinct `start` on each), then prints the instructions the
# runtime's worker threads ran per request. Needs valgrind, h2load (nghttp2-client), curl,
# python3. Callgrind slows the server ~50x, so the sampling cap (100 a second) takes a far
# larger share of requests than at full speed: the difference is an upper bound.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS="${REQUESTS:-20000}"
CONNECTIONS="${CONNECTIONS:-32}"
AE="gzip, deflate, br, zstd"
for tool in valgrind callgrind_control callgrind_annotate h2load curl python3; do
    command -v "$tool" >/dev/null || { echo "profile_learn: needs $tool" >&2; exit 2; }
done
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

export CARGO_TARGET_DIR="${PROFILE_TARGET_DIR:-$PWD/target/profile-learn}"
CARGO_PROFILE_RELEASE_DEBUG=1 build_demo
START_TIMEOUT=120 # callgrind starts the demo ~50x slower

python3 -c "
for i in range(20000): print(f'/api/items?n=5&start={(i * 7919 + 13) % 1000000000}')" >"$WORK/paths"

phase() { # the learner's phase from /stats, "off" without one
    curl -sS --max-time 30 "$1/stats" | python3 -c '
import json, sys
l = json.load(sys.stdin)["dictionaries"]["learned"]
print("off" if l is None else l["phase"])'
}

# Instructions per request on the runtime's workers for one side ($1: on | off).
profile() {
    local flags=() base i
    [[ "$1" == off ]] && flags=(--no-learn)
    SERVER_PREFIX=(valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$1.%p")
    start_server ours "${flags[@]}"
    base="$BASE"
    warm_from_clients "$base/api/items?n=5" 1999000 900 "$AE"
    for ((i = 0; i < 600; i++)); do
        [[ "$1" == off || "$(phase "$base")" == serving ]] && break
        sleep 1
    done
    sed "s#^#$base#" "$WORK/paths" >"$WORK/urls"
    h2load --h1 -n 4000 -c "$CONNECTIONS" -i "$WORK/urls" -H "Accept-Encoding: $AE" >/dev/null
    callgrind_control -z "$SERVER_PID" >/dev/null
    h2load --h1 -n "$REQUESTS" -c "$CONNECTIONS" -i "$WORK/urls" -H "Accept-Encoding: $AE" |
        grep -E '^requests:' >&2
    callgrind_control -d "$SERVER_PID" >/dev/null
    kill "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=""
    callgrind_annotate --inclusive=yes "$WORK"/cg."$1".*.1 2>/dev/null |
        awk -v n="$REQUESTS" -v side="$1" '/multi_thread::worker::run \[/ && !done {
            gsub(",", "", $1); printf "%s %.0f\n", side, $1 / n; done = 1 }'
}

on="$(profile on)"
off="$(profile off)"
echo "instructions per request on the runtime's workers: learning $on, learning $off"
awk -v a="${on#* }" -v b="${off#* }" 'BEGIN { printf "learning on - off: %d a request\n", a - b }'
