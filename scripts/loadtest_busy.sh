# The `busy` section of scripts/loadtest_streams.sh (sourced by it: uses scripts/lib.sh's
# start_server, stop_server, json_field, ratio, log, CLIENT_PIN, BASE, WORK, LOADGEN, and
# its ENCS, BUSY_*).
# shellcheck shell=bash

declare -A B_N B_CPU B_BYTES B_DONE B_SECS
run_busy() { # $1: streams, $2: ms between events, $3: identity or a coding
    local conns=$1 ms=$2 enc=$3 key="$1/$2/$3" n out="$WORK/busy-$1-$2-$3.json"
    n=$((BUSY_SECONDS * 1000 / ms))
    ((n * conns <= BUSY_EVENTS)) || n=$((BUSY_EVENTS / conns))
    ((n >= 1)) || n=1
    start_server ours
    log "== busy streams: $conns x /events?n=$n&interval_ms=$ms ($enc)"
    "${CLIENT_PIN[@]}" timeout $((BUSY_SECONDS * 20 + 90)) "$LOADGEN" events "$BASE" \
        --pid "$SERVER_PID" --conns "$conns" --path "/events?n=$n&interval_ms=$ms" \
        --encoding "$enc" --timeout $((BUSY_SECONDS * 20 + 60)) >"$out" ||
        log "warning: loadgen events exited with status $? ($key)"
    stop_server
    [[ -s "$out" ]] || echo '{}' >"$out"
    cat "$out" >&2
    B_N[$key]=$n
    B_CPU[$key]="$(json_field cpu_us_per_event "$out")"
    B_BYTES[$key]="$(json_field bytes_per_stream "$out")"
    B_DONE[$key]="$(json_field complete "$out")/$(json_field encoded "$out")"
    B_SECS[$key]="$(json_field seconds "$out")"
}

busy_report() {
    local conns ms ref enc k over rb
    echo
    echo "### Busy streams"
    echo
    echo "S SSE responses (\`loadgen events\`, \`/events?n=N&interval_ms=I\`) with" \
        "\`Accept-Encoding: CODING\` (identity: none), read to their end; ours only" \
        "(tower-http does not compress \`text/event-stream\`). Server CPU: the server's" \
        "threads' run time (schedstat) from the first request to the last response's end," \
        "per event; over identity: minus identity's with the same S and I. Bytes: the body" \
        "per stream on the wire (chunked framing excluded)."
    echo
    echo "| streams | interval (ms) | coding | events per stream | complete / encoded | wall (s) | server CPU per event (us) | over identity (us) | bytes per stream | bytes / identity |"
    echo "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|"
    for conns in "${BUSY_S[@]}"; do
        for ms in "${BUSY_I[@]}"; do
            ref="$conns/$ms/identity"
            for enc in identity "${ENCS[@]}"; do
                k="$conns/$ms/$enc" over="" rb=""
                if [[ "$enc" != identity ]]; then
                    over="$(awk -v a="${B_CPU[$k]}" -v b="${B_CPU[$ref]}" 'BEGIN {
                        if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) printf "%+.1f", a - b; else printf "n/a" }')"
                    rb="$(ratio "${B_BYTES[$k]}" "${B_BYTES[$ref]}")"
                fi
                echo "| $conns | $ms | $enc | ${B_N[$k]} | ${B_DONE[$k]} | ${B_SECS[$k]} |" \
                    "${B_CPU[$k]} | $over | ${B_BYTES[$k]} | $rb |"
            done
        done
    done
}
