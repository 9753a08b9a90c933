#!/usr/bin/env bash
# Idle WebSocket connections: what 10,000 open connections to the demo's /ws/echo cost
# it in memory, compressed (permessage-deflate, no context takeover: the default) against
# uncompressed and OpenIM-style gzip, each after one echoed message. Loopback only;
# measurement only (exit 1 only when a run echoed nothing).
#
#   scripts/loadtest_websocket.sh                 # ~2 min
#   CONNS=2000 HOLD=5 scripts/loadtest_websocket.sh
#
# Each offer gets a fresh demo . Reported per offer: the
# server's VmRSS before the load, during the idle hold (CHECKPOINT s in) and at its end,
# its peak (VmHWM), and the growth per connection. The open-file limit (per process: the
# load generator and the demo each hold one fd per connection) is raised to 2 x CONNS.
# Env: CONNS (10000), HOLD (10), CHECKPOINT (5), OFFERS ("none deflate gzip"),
# CONNECT_PARALLEL (64), TIME_LIMIT (600: the whole script).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

CONNS="${CONNS:-10000}"
HOLD="${HOLD:-10}"
CHECKPOINT="${CHECKPOINT:-5}"
OFFERS=${OFFERS:-"none deflate gzip"}
CONNECT_PARALLEL="${CONNECT_PARALLEL:-64}"
TIME_LIMIT="${TIME_LIMIT:-600}"
knob CONNS 1 50000
knob HOLD 1 600
knob CHECKPOINT 0 600
knob CONNECT_PARALLEL 1 4096
knob TIME_LIMIT 10 3600

ulimit -n $((CONNS * 2 + 1024)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
(($(ulimit -n) > CONNS + 256)) || die "the open-file limit $(ulimit -n) is too low for $CONNS connections"
log "open-file limit $(ulimit -n)"
build_demo
build_loadgen

# Bounded in time: the whole script stops after TIME_LIMIT seconds.
( sleep "$TIME_LIMIT"; log "time limit reached"; kill -TERM $$ ) 2>/dev/null &
WATCHDOG=$!
trap 'kill "$WATCHDOG" 2>/dev/null || true; lib_cleanup' EXIT

printf '%-8s %8s %8s %12s %12s %12s %12s %14s\n' offer conns echoed rss_before rss_idle rss_end hwm_end kib_per_conn
for offer in $OFFERS; do
    start_server ours
    sleep 1
    out="$WORK/ws-$offer.json"
    "$LOADGEN" ws-idle "$BASE" --pid "$SERVER_PID" --conns "$CONNS" --hold "$HOLD" \
        --checkpoint "$CHECKPOINT" --offer "$offer" --connect-parallel "$CONNECT_PARALLEL" >"$out" || true
    stop_server
    echoed=$(json_field echoed "$out")
    before=$(json_field rss_before_kib "$out")
    idle=$(json_field rss_checkpoint_kib "$out")
    end=$(json_field rss_end_kib "$out")
    hwm=$(json_field hwm_end_kib "$out")
    per=$(awk -v a="$idle" -v b="$before" -v n="$echoed" 'BEGIN { if (n > 0) printf "%.2f", (a - b) / n; else print "n/a" }')
    printf '%-8s %8s %8s %12s %12s %12s %12s %14s\n' "$offer" "$CONNS" "$echoed" "$before" "$idle" "$end" "$hwm" "$per"
    [[ "$echoed" =~ ^[0-9]+$ && "$echoed" -gt 0 ]] || die "no connection echoed with offer $offer: $(cat "$out")"
done
