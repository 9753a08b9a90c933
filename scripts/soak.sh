#!/usr/bin/env bash
# Soak test: the demo server (release build) under bounded, mixed loopback load.
#
#   scripts/soak.sh [SECONDS]        # default 60; or SOAK_SECONDS=15 scripts/soak.sh
#
# Env: SOAK_SECONDS, SOAK_CONCURRENCY (driver threads, default 4), SOAK_MAX_REQUESTS,
#      SOAK_RSS_GROWTH_PCT / SOAK_RSS_GROWTH_MIB (growth rule, see scripts/soak/driver.py).
#
# The load driver (scripts/soak/driver.py, Python stdlib) mixes /api/items JSON, /big.txt,
# /events SSE, gzip/deflate uploads to /api/echo (echo checked), corrupt uploads (400),
# unsupported codings (415) and occasional bombs (413), checks every reply, samples the
# server's VmRSS every 250 ms and prints a JSON summary with /stats pool figures.
# Exits non-zero on any unexpected reply, on RSS growth, or if the server dies.
# Kills only the server it started (scripts/lib.sh's trap on EXIT).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-${SOAK_SECONDS:-60}}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "soak: SECONDS must be an integer, got '$seconds'" >&2; exit 2; }

# shellcheck source=scripts/lib.sh
source scripts/lib.sh
echo "soak: cargo build --release --example server --features metrics"
build_demo --features metrics
start_server ours
echo "soak: server pid $SERVER_PID at $BASE; load for ${seconds}s"

status=0
timeout --signal=TERM $((seconds + 120)) python3 scripts/soak/driver.py "$BASE" "$SERVER_PID" "$seconds" || status=$?

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "soak: FAIL: the server exited during the run; stderr:" >&2
  tail -n 50 "$WORK/stderr-ours" >&2
  exit 1
fi
if grep -qiE 'panic|panicked' "$WORK/stderr-ours"; then
  echo "soak: FAIL: the server logged a panic:" >&2
  grep -iE -A5 'panic|panicked' "$WORK/stderr-ours" | head -n 40 >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "soak: FAIL (driver exit status $status)" >&2
  exit "$status"
fi
echo "soak: PASS"
