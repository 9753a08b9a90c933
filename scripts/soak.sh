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
# Kills only the server it started (trap on EXIT).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-${SOAK_SECONDS:-60}}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "soak: SECONDS must be an integer, got '$seconds'" >&2; exit 2; }

echo "soak: cargo build --release --example server --features metrics"
cargo build --release --example server --features metrics --quiet
server_bin="${CARGO_TARGET_DIR:-target}/release/examples/server"

workdir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

ADDR=127.0.0.1:0 RUST_LOG=warn "$server_bin" >"$workdir/stdout" 2>"$workdir/stderr" &
server_pid=$!

base=""
for _ in $(seq 100); do
  line=$(head -n1 "$workdir/stdout" 2>/dev/null || true)
  if [[ "$line" == "listening on http://127.0.0.1:"* ]]; then
    base=${line#listening on }
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "soak: the server did not start; stderr:" >&2
  cat "$workdir/stderr" >&2
  exit 1
fi
echo "soak: server pid $server_pid at $base; load for ${seconds}s"

status=0
timeout --signal=TERM $((seconds + 120)) python3 scripts/soak/driver.py "$base" "$server_pid" "$seconds" || status=$?

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "soak: FAIL: the server exited during the run; stderr:" >&2
  tail -n 50 "$workdir/stderr" >&2
  exit 1
fi
if grep -qiE 'panic|panicked' "$workdir/stderr"; then
  echo "soak: FAIL: the server logged a panic:" >&2
  grep -iE -A5 'panic|panicked' "$workdir/stderr" | head -n 40 >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "soak: FAIL (driver exit status $status)" >&2
  exit "$status"
fi
echo "soak: PASS"
