#!/usr/bin/env bash
# The stall scenario of the constant-rate issue through a peer open-loop tool
# and benchrig, side by side: a server answering in ~1 ms stalls every
# response for 1 s once, 4 s into a 10 s run at 1,000 req/s over 32
# connections. Each tool gets a fresh server. Prints p50/p99/max and the
# achieved rate per tool.
#
# wrk2 is not packaged by Debian, so the peer is vegeta, installed from the
# Go module proxy into a temporary GOBIN.
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-1000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}

work=$(mktemp -d -t benchrig-rate.XXXXXX)
server_pid=
stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=
}
cleanup() { stop_server || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM

make -s build >/dev/null
if command -v wrk2 >/dev/null; then peer=wrk2; else
	peer=vegeta
	echo "wrk2 is not in Debian; installing vegeta v12.13.0 into a temp GOBIN…" >&2
	GOBIN="$work/bin" go install github.com/tsenart/vegeta/v12@v12.13.0
fi

start_server() {
	./bin/stall -addr 127.0.0.1:0 -delay 1ms -stall-after 4s -stall-for 1s >"$work/server.log" 2>&1 &
	server_pid=$!
	addr=
	for _ in $(seq 100); do addr=$(sed -n 's/^listening on //p' "$work/server.log"); [ -n "$addr" ] && break; sleep 0.05; done
	[ -n "$addr" ] || { echo "stall server did not start" >&2; exit 1; }
}

printf '| %-34s | %10s | %10s | %10s | %12s |\n' "tool (latency measured from)" p50 p99 max "achieved/s"
printf '|%s|%s|%s|%s|%s|\n' "------------------------------------" "------------" "------------" "------------" "--------------"

start_server
if [ "$peer" = vegeta ]; then
	echo "GET http://$addr/" | "$work/bin/vegeta" attack -rate="$RATE" -duration="${DURATION}s" \
		-workers="$CONNECTIONS" -max-workers="$CONNECTIONS" -connections="$CONNECTIONS" -max-connections="$CONNECTIONS" \
		-timeout=10s >"$work/vegeta.bin"
	"$work/bin/vegeta" report -type=json <"$work/vegeta.bin" >"$work/vegeta.json"
	python3 - "$work/vegeta.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
l = d["latencies"]
ms = lambda ns: f"{ns/1e6:.2f} ms"
print(f"| {'vegeta (actual send)':<34} | {ms(l['50th']):>10} | {ms(l['99th']):>10} | {ms(l['max']):>10} | {d['throughput']:>12.1f} |")
PY
else
	wrk2 -t1 -c"$CONNECTIONS" -d"${DURATION}s" -R"$RATE" --latency "http://$addr/" | tee "$work/wrk2.txt" >/dev/null
	echo "wrk2 output:"; cat "$work/wrk2.txt"
fi
stop_server

start_server
./bin/benchrig http "http://$addr/" -R "$RATE" -c "$CONNECTIONS" -d "${DURATION}s" --json >"$work/benchrig.json" || true
python3 - "$work/benchrig.json" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
l = [x for x in lines if x.get("type") == "sample"][0]["load"]
ms = lambda us: f"{us/1e3:.2f} ms"
p = lambda lat, q: next(x["us"] for x in lat["percentiles"] if x["q"] == q)
for name, lat in (("benchrig (due time, corrected)", l["latency"]), ("benchrig (actual send)", l["service"])):
    print(f"| {name:<34} | {ms(p(lat, 50)):>10} | {ms(p(lat, 99)):>10} | {ms(lat['max_us']):>10} | {l['rate']['achieved']:>12.1f} |")
r = l["rate"]
print(f"\nbenchrig: coverage {r['coverage']:.1f} %, {r['late']} late, {r['dropped']} dropped, schedule lag p99 {p(r['lag'], 99)/1e3:.1f} ms")
PY
stop_server
