#!/usr/bin/env bash
# benchrig http -R beside vegeta at the same constant rate against the same
# pinned hello server: server on CPU 0 (GOMAXPROCS=1), both clients on CPU
# 1, the same rate, connections and duration, RUNS times interleaved.
# Prints req/s and requests per client CPU-second as median [min–max] and
# the ratio to vegeta, then benchrig's schedule lag (p50, p99: how late
# each request left after its due time) and both tools' latency.
#
#   bench/ratecpu-peers.sh                         # 5,000 req/s, 32 connections, 5 s, 3 runs
#   RATE=1000 RUNS=5 bench/ratecpu-peers.sh
#   PINNED=0 bench/ratecpu-peers.sh                # every process on every CPU
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/ratecpu-peers.sh
#   TIMER_SLACK=1ms bench/ratecpu-peers.sh         # also benchrig --timer-slack 1ms, as "benchrig-slack"
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
RATE=${RATE:-5000}
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
VEGETA=${VEGETA:-v12.13.0}

work=$(mktemp -d -t benchrig-ratecpu.XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
make -s build >/dev/null
vegeta=bench/.tools/vegeta-$VEGETA
if [ ! -x "$vegeta" ]; then
	echo "installing vegeta $VEGETA from the Go module proxy…" >&2
	mkdir -p bench/.tools
	GOBIN="$work/gobin" go install "github.com/tsenart/vegeta/v12@$VEGETA"
	mv "$work/gobin/vegeta" "$vegeta"
fi
measure() { python3 bench/lib/measure.py "$work/out" -- taskset -c "$CLIENT_CPU" "$@"; }
cpu_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"]+d["sys"])'; }

GOMAXPROCS=1 taskset -c "$SERVER_CPU" ./bin/hello -addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 100); do addr=$(sed -n 's/^listening on //p' "$work/server.log"); [ -n "$addr" ] && break; sleep 0.05; done
[ -n "$addr" ] || { echo "hello server did not start" >&2; exit 1; }
url="http://$addr/"
echo "server: bin/hello pid $server_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; $RATE req/s, $CONNECTIONS connections, ${DURATION}s, $RUNS runs each; vegeta $VEGETA; $(uptime)" >&2

: >"$work/rows"
: >"$work/lags"
for run in $(seq "$RUNS"); do
	# vegeta: its workers and connections bounded to the same count
	cpu=$(echo "GET $url" | measure "$vegeta" attack -rate="$RATE" -duration="${DURATION}s" \
		-workers="$CONNECTIONS" -max-workers="$CONNECTIONS" -connections="$CONNECTIONS" -max-connections="$CONNECTIONS" -timeout=10s | cpu_of)
	"$vegeta" report -type=json <"$work/out" >"$work/vegeta.json"
	python3 - "$work/vegeta.json" "$cpu" "$DURATION" >>"$work/rows" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = round(d["requests"] * d["success"])
print("vegeta", ok, sys.argv[3], sys.argv[2])
PY
	python3 - "$work/vegeta.json" >>"$work/lags" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["latencies"]
print(f"vegeta latency (from its send) p50 {l['50th']/1e3:.0f} µs, p99 {l['99th']/1e3:.0f} µs")
PY
	for tool in benchrig ${BENCHRIG_BEFORE:+benchrig-before} ${TIMER_SLACK:+benchrig-slack}; do
		bin=./bin/benchrig
		[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
		cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" http "$url" $(nocal "$bin") $(slack "$tool") -R "$RATE" -c "$CONNECTIONS" -d "${DURATION}s" --json | cpu_of)
		read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds)
		echo "$tool $reqs $secs $cpu" >>"$work/rows"
		python3 bench/lib/lag.py "$work/out" "$tool" >>"$work/lags"
	done
	echo "run $run done" >&2
done
echo
echo "HTTP GET at a constant $RATE req/s against a pinned Go hello server, $CONNECTIONS connections, ${DURATION}s × $RUNS (client CPU = user+sys of the whole client process, getrusage):"
python3 bench/lib/summary.py vegeta <"$work/rows"
echo
cat "$work/lags"
