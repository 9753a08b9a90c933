# The `whole` section of scripts/loadtest_streams.sh (sourced by it: uses scripts/lib.sh's
# start_server, stop_server, proc_status_kb, diff_kb, ratio, mib, median, knob, die, log,
# CLIENT_PIN, BASE, WORK, and its h2load_time, proto_name, REQUESTS, PROTOS).
# shellcheck shell=bash
#
# Big bodies known in full: WHOLE_CONNS connections, REQUESTS x /api/items?n=WHOLE_ITEMS
# (~1 MB of JSON the handler builds in memory, with a Content-Length) with a browser's
# `Accept-Encoding: gzip, deflate, br`, over HTTP/1.1 and h2c, ours and tower-http side by
# side, WHOLE_ROUNDS rounds (servers alternating; medians). Every stream that yields between
# slices keeps its handler's body alive meanwhile: the check is that RSS growth stays within
# MAX_WHOLE_GROWTH (3.0) x tower-http's. WHOLE_FLAGS: flags for our server alone.

WHOLE_CONNS="${WHOLE_CONNS:-256}"
# Flags for our server alone (e.g. `--no-cache`: every answer compressed, none served again).
read -r -a WHOLE_FLAGS <<<"${WHOLE_FLAGS:-}"
WHOLE_ITEMS="${WHOLE_ITEMS:-5500}"
WHOLE_ROUNDS="${WHOLE_ROUNDS:-3}"
WHOLE_ENCODING="gzip, deflate, br"
knob WHOLE_CONNS 1 4096
knob WHOLE_ITEMS 1 100000
knob WHOLE_ROUNDS 1 20
((WHOLE_CONNS <= REQUESTS)) || die "WHOLE_CONNS must not exceed REQUESTS"
declare -A W_GROW W_TTFB W_OK W_CE

run_whole() { # $1: h1 | h2c, $2: ours | tower-http, $3: round
    local key="$1/$2/$3" out="$WORK/whole-$1-$2-$3.txt" rss0 hwm1 args=()
    local path="/api/items?n=$WHOLE_ITEMS"
    [[ "$1" == h1 ]] && args=(--h1)
    if [[ "$2" == ours ]]; then start_server "$2" "${WHOLE_FLAGS[@]}"; else start_server "$2"; fi
    rss0="$(proc_status_kb VmRSS)"
    log "== whole: $1, -c $WHOLE_CONNS -n $REQUESTS, $path, $2, round $3 (VmRSS $rss0 KiB)"
    "${CLIENT_PIN[@]}" timeout 300 h2load "${args[@]}" -c "$WHOLE_CONNS" -n "$REQUESTS" -m 1 -t 1 \
        -H "Accept-Encoding: $WHOLE_ENCODING" "$BASE$path" >"$out" 2>&1 ||
        log "warning: h2load exited with status $? (whole, $key)"
    hwm1="$(proc_status_kb VmHWM)"
    W_CE[$key]="$(curl -sS --max-time 30 -o /dev/null -D - -H "Accept-Encoding: $WHOLE_ENCODING" \
        "$BASE$path" 2>/dev/null | awk -F': *' 'tolower($1) == "content-encoding" { v = $2; gsub(/\r/, "", v) }
        END { print (v == "" ? "none" : v) }')"
    stop_server
    grep -E '^(finished|requests:|time to 1st byte:)' "$out" >&2 || true
    W_GROW[$key]="$(diff_kb "$hwm1" "$rss0")"
    W_TTFB[$key]="$(h2load_time "time to 1st byte" 3 "$out")"
    W_OK[$key]="$(awk '/^requests:/ { for (i = 2; i <= NF; i++) if ($i ~ /^succeeded/) { print $(i - 1); exit } }' "$out")"
}

whole_section() {
    local proto round server
    for proto in "${PROTOS[@]}"; do
        for ((round = 1; round <= WHOLE_ROUNDS; round++)); do
            for server in ours tower-http; do
                run_whole "$proto" "$server" "$round"
            done
        done
    done
}

# Medians over rounds into W_*[proto/server].
whole_medians() {
    local proto server round grow ttfb
    for proto in "${PROTOS[@]}"; do
        for server in ours tower-http; do
            grow=() ttfb=()
            for ((round = 1; round <= WHOLE_ROUNDS; round++)); do
                grow+=("${W_GROW[$proto/$server/$round]}")
                ttfb+=("${W_TTFB[$proto/$server/$round]}")
            done
            W_GROW[$proto/$server]="$(median "${grow[@]}")"
            W_TTFB[$proto/$server]="$(median "${ttfb[@]}")"
        done
    done
}

whole_report() {
    local proto r rt per round
    echo
    echo "### Big bodies known in full"
    echo
    echo "\`h2load -m 1 -t 1 -n $REQUESTS -c $WHOLE_CONNS -H 'Accept-Encoding: $WHOLE_ENCODING'\`" \
        "on \`/api/items?n=$WHOLE_ITEMS\` (HTTP/1.1: \`--h1\`), $WHOLE_ROUNDS rounds, servers" \
        "alternating; medians over rounds (per round: growth KiB / TTFB mean ms, ours then tower-http)."
    echo
    echo "| protocol | served (ours / tower-http) | RSS growth ours (MiB) | tower-http (MiB) | ours/tower-http | TTFB mean ours (ms) | tower-http (ms) | ours/tower-http | rounds |"
    echo "|---|---|--:|--:|--:|--:|--:|--:|---|"
    for proto in "${PROTOS[@]}"; do
        r="$(ratio "${W_GROW[$proto/ours]}" "${W_GROW[$proto/tower-http]}")"
        rt="$(ratio "${W_TTFB[$proto/ours]}" "${W_TTFB[$proto/tower-http]}")"
        per=""
        for ((round = 1; round <= WHOLE_ROUNDS; round++)); do
            per+="${W_GROW[$proto/ours/$round]}/${W_TTFB[$proto/ours/$round]},"
            per+=" ${W_GROW[$proto/tower-http/$round]}/${W_TTFB[$proto/tower-http/$round]}; "
        done
        echo "| $(proto_name "$proto") | ${W_CE[$proto/ours/1]} / ${W_CE[$proto/tower-http/1]} |" \
            "$(mib "${W_GROW[$proto/ours]}") | $(mib "${W_GROW[$proto/tower-http]}") | $r |" \
            "${W_TTFB[$proto/ours]} | ${W_TTFB[$proto/tower-http]} | $rt | ${per%; } |"
    done
}

# Fails when the median growth of a protocol is over MAX_WHOLE_GROWTH x tower-http's.
whole_check() {
    local proto r over=0 max="${MAX_WHOLE_GROWTH:-3.0}"
    for proto in "${PROTOS[@]}"; do
        r="$(ratio "${W_GROW[$proto/ours]}" "${W_GROW[$proto/tower-http]}")"
        if ! awk -v r="$r" -v m="$max" 'BEGIN { exit !(r != "-" && r + 0 <= m + 0) }'; then
            log "check failed: $(proto_name "$proto"), big bodies known in full: RSS growth ${r}x tower-http's (limit ${max}x)"
            over=1
        fi
    done
    ((over == 0)) || return 1
    log "check passed: big bodies known in full, RSS growth within ${max}x tower-http's"
}
