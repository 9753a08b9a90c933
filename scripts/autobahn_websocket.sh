#!/usr/bin/env bash
# Autobahn's cases (1-7 framing, 12-13 permessage-deflate) by kosoku (pip install kosoku),
# in either role. ROLE=server (the default): kosoku's fuzzing client against the demo's
# /ws/echo, with the demo's defaults (no context takeover, messages under 128 bytes and
# incompressible ones sent uncompressed). ROLE=client: kosoku's fuzzing server, driven by
# this crate's tokio-tungstenite client (examples/autobahn_client.rs). Prints the counts by
# section and behavior; exits 1 when a case fails, except those kosoku itself errs on
# (`KOSOKU_ERRORS` below), which are listed.
#
#   scripts/autobahn_websocket.sh
#   ROLE=client WS_DEFLATE_THRESHOLD=0 scripts/autobahn_websocket.sh
#   CASES="12.1.* 13.1.*" WS_DEFLATE_THRESHOLD=0 scripts/autobahn_websocket.sh
#
# Env: ROLE (server), CASES (default "1.* 2.* 3.* 4.* 5.* 6.* 7.* 12.* 13.*"), PARALLEL
# (2, server role only: the fuzzing server runs one case at a time), WS_DEFLATE_THRESHOLD
# (the demo's or the client's, default 128), REPORTS (a directory to keep the reports).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

ROLE=${ROLE:-server}
CASES=${CASES:-"1.* 2.* 3.* 4.* 5.* 6.* 7.* 12.* 13.*"}
PARALLEL="${PARALLEL:-2}"
knob PARALLEL 1 16
[[ "$ROLE" == server || "$ROLE" == client ]] || die "ROLE must be server or client, got '$ROLE'"
command -v kosoku >/dev/null || die "kosoku is required (python3 -m pip install kosoku)"

include=()
for c in $CASES; do include+=(-i "$c"); done
reports="${REPORTS:-$WORK/reports}"
KOSOKU_PID=""
trap 'stop_pid KOSOKU_PID; lib_cleanup' EXIT

# kosoku exits 1 on any non-OK case: the verdict is read from its report below.
if [[ "$ROLE" == server ]]; then
    build_demo
    start_server ours
    kosoku -m fuzzingclient "${include[@]}" -p "$PARALLEL" -o "$reports" \
        "ws://${BASE#http://}/ws/echo" >"$WORK/kosoku.log" 2>&1 || true
    stop_server
else
    log "building the Autobahn client (release)"
    (cd "$ROOT" && cargo build --release --example autobahn_client --quiet)
    client="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/autobahn_client"
    kosoku -m fuzzingserver "${include[@]}" -o "$reports" 127.0.0.1:0 >"$WORK/kosoku.log" 2>&1 &
    KOSOKU_PID=$!
    url=""
    for ((i = 0; i < START_TIMEOUT * 10; i++)); do
        url="$(grep -o 'ws://[0-9.:]*' "$WORK/kosoku.log" | head -n 1 || true)"
        [[ -n "$url" ]] && break
        kill -0 "$KOSOKU_PID" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n "$url" ]] || { cat "$WORK/kosoku.log" >&2; die "kosoku's fuzzing server did not start"; }
    "$client" "$url" >"$WORK/client.log" 2>&1 || { tail -n 30 "$WORK/client.log" >&2; die "the client failed"; }
    # The client's last call has kosoku write its reports and exit.
    wait "$KOSOKU_PID" || true
    KOSOKU_PID=""
fi
[[ -f "$reports/index.json" ]] || { tail -n 30 "$WORK/kosoku.log" >&2; die "kosoku wrote no report"; }

python3 - "$reports/index.json" <<'PY'
import collections, json, sys

# kosoku 0.1.0 hands its Python case code a `str` for an uncompressed text echo in a
# compressed session (RFC 7692 section 6 lets a sender leave any message uncompressed),
# and the case then fails in `hashlib` before judging the echo.
KOSOKU_ERRORS = ("Strings must be encoded before hashing",)

report = json.load(open(sys.argv[1]))
cases = next(iter(report.values()))
by_section = collections.defaultdict(collections.Counter)
closes = collections.Counter()
failed, tool = [], []
for case, r in cases.items():
    by_section[case.split(".")[0]][r["behavior"]] += 1
    closes[r["behaviorClose"]] += 1
    if r["behavior"] in ("OK", "NON-STRICT", "INFORMATIONAL"):
        continue
    detail = json.load(open(sys.argv[1].replace("index.json", r["reportfile"]))) if "reportfile" in r else {}
    if r["behavior"] == "ERROR" and detail.get("result", "") in KOSOKU_ERRORS:
        tool.append(case)
    else:
        failed.append((case, r["behavior"], detail.get("result", "")))
print(f"{len(cases)} cases")
for section in sorted(by_section, key=int):
    print(f"  section {section}: " + ", ".join(f"{k} {v}" for k, v in sorted(by_section[section].items())))
print("  close behavior: " + ", ".join(f"{k} {v}" for k, v in sorted(closes.items())))
if tool:
    print(f"  kosoku's own errors ({len(tool)}): {' '.join(sorted(tool))}")
for case, behavior, result in failed:
    print(f"  FAILED {case}: {behavior}: {result}")
sys.exit(1 if failed else 0)
PY
