#!/usr/bin/env bash
# benchrig http beside wrk and autocannon against the same pinned server:
# server on CPU 0 (GOMAXPROCS=1), every client on CPU 1, same connections and
# duration, each tool RUNS times, interleaved. Prints req/s and requests per
# client CPU-second as median [min–max], and each tool's ratio to wrk.
# The cleartext case has a row "floor" too: bench/floor/floor.c, the
# syscall floor of a client (fixed request, fixed-size responses counted,
# nothing parsed), so every tool reads as a fraction of it.
# Then the same over TLS: wrk and benchrig against a pinned nginx (one
# worker, TLS 1.3, AES-128-GCM for both; bench/lib/nginx.sh).
# Every table ends with the server's CPU per request under each client
# (bench/lib/measure.py, SERVER_PID); benchrig(load-window) is benchrig's
# own report of its CPU over the load window, without start-up.
#
#   bench/http-peers.sh            # 10 connections, 5 s, 3 runs
#   CONNECTIONS=50 DURATION=10 RUNS=5 bench/http-peers.sh
#   HTTPS=0 bench/http-peers.sh    # cleartext only; HTTP=0: https only
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/http-peers.sh   # also an older build, interleaved, as "benchrig-before"
#   BUSY_POLL=20us bench/http-peers.sh   # also benchrig --busy-poll 20us, interleaved, as "benchrig-busypoll"
#   CLIENT_QUOTA=0.3 bench/http-peers.sh   # every client limited to 0.3 of a CPU (bench/lib/quota.sh): throughput per client core at saturation
#   URING=1 bench/http-peers.sh   # also the floor on io_uring (floor --uring), interleaved, as "floor-uring"
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
# shellcheck source=lib/quota.sh
. bench/lib/quota.sh
# shellcheck source=lib/measure.sh
. bench/lib/measure.sh
CONNECTIONS=${CONNECTIONS:-10}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
HTTP=${HTTP:-1}
HTTPS=${HTTPS:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

work=$(mktemp -d -t benchrig-peers.XXXXXX)
server_pid=
source bench/lib/nginx.sh
cleanup() {
	stop_nginx
	quota_stop
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
quota_init "$work"

command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
if [ ! -x bench/.tools/node_modules/.bin/autocannon ]; then
	echo "installing autocannon into bench/.tools (npm)…" >&2
	mkdir -p bench/.tools && npm install --silent --prefix bench/.tools autocannon >/dev/null 2>&1
fi
autocannon=bench/.tools/node_modules/.bin/autocannon
make -s build >/dev/null
floor=$(bench/floor/floor.sh build "$work")

# window_row TOOL: for benchrig's own row (not an older build's, not the
# busy-polling one), a TOOL(load-window) row (bench/lib/measure.sh).
window_row() {
	case "$1" in benchrig | benchrig-https) ;; *) return 0 ;; esac
	echo "$1(load-window) $(window_cpu)"
}

if [ "$HTTP" = 1 ]; then
: >"$work/server.log"
GOMAXPROCS=1 taskset -c "$SERVER_CPU" ./bin/hello -addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
export SERVER_PID=$server_pid # measure.py: the server's CPU under each client
for _ in $(seq 100); do addr=$(sed -n 's/^listening on //p' "$work/server.log"); [ -n "$addr" ] && break; sleep 0.05; done
url="http://$addr/"
echo "server: bin/hello pid $server_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; $CONNECTIONS connections, ${DURATION}s, $RUNS runs each; $(uptime)" >&2

: >"$work/rows"
for run in $(seq "$RUNS"); do
	# wrk: one thread, as the client has one core.
	cpu=$(measure wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$url" | cpu_of)
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$work/out")
	echo "wrk $reqs $DURATION $cpu" >>"$work/rows"

	cpu=$(measure "$floor" http "${addr%:*}" "${addr##*:}" "$CONNECTIONS" "$DURATION" | cpu_of)
	read -r _ reqs _ secs <"$work/out"
	echo "floor $reqs $secs $cpu" >>"$work/rows"
	if [ "${URING:-0}" = 1 ]; then
		cpu=$(measure "$floor" --uring http "${addr%:*}" "${addr##*:}" "$CONNECTIONS" "$DURATION" | cpu_of)
		read -r _ reqs _ secs <"$work/out"
		echo "floor-uring $reqs $secs $cpu" >>"$work/rows"
	fi

	cpu=$(measure "$autocannon" -c "$CONNECTIONS" -d "$DURATION" -j "$url" | cpu_of)
	reqs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["total"])' "$work/out")
	echo "autocannon $reqs $DURATION $cpu" >>"$work/rows"

	for tool in benchrig ${BENCHRIG_BEFORE:+benchrig-before} ${BUSY_POLL:+benchrig-busypoll}; do
		bin=./bin/benchrig
		[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
		cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" http "$url" $(nocal "$bin") $(busypoll "$tool") -c "$CONNECTIONS" -d "${DURATION}s" --json | cpu_of)
		read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds)
		echo "$tool $reqs $secs $cpu" >>"$work/rows"
		window_row "$tool" >>"$work/rows"
	done
	echo "run $run done" >&2
done
echo
echo "HTTP GET against a pinned Go hello server, $CONNECTIONS connections, ${DURATION}s × $RUNS (client CPU = user+sys of the whole client process, getrusage):"
python3 bench/lib/summary.py wrk <"$work/rows"
echo "The same, each tool's ratio to the floor (bench/floor/floor.c: what any client must spend in system calls):"
python3 bench/lib/summary.py floor <"$work/rows"
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=
fi

if [ "$HTTPS" = 1 ]; then
start_nginx "$work" "$SERVER_CPU"
export SERVER_PID=$nginx_pid
url="https://127.0.0.1:$nginx_port/"
echo "server: nginx pid $nginx_pid on CPU $SERVER_CPU (TLS 1.3, TLS_AES_128_GCM_SHA256); clients on CPU $CLIENT_CPU; $CONNECTIONS connections, ${DURATION}s, $RUNS runs each; $(uptime)" >&2
: >"$work/rows"
for run in $(seq "$RUNS"); do
	cpu=$(measure wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$url" | cpu_of)
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$work/out")
	echo "wrk-https $reqs $DURATION $cpu" >>"$work/rows"

	for tool in benchrig-https ${BENCHRIG_BEFORE:+benchrig-before-https} ${BUSY_POLL:+benchrig-busypoll-https}; do
		bin=./bin/benchrig
		[ "$tool" = benchrig-before-https ] && bin=$BENCHRIG_BEFORE
		cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" http "$url" --insecure $(nocal "$bin") $(busypoll "$tool") -c "$CONNECTIONS" -d "${DURATION}s" --json | cpu_of)
		read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds)
		echo "$tool $reqs $secs $cpu" >>"$work/rows"
		window_row "$tool" >>"$work/rows"
	done
	echo "https run $run done" >&2
done
echo
echo "HTTPS GET (HTTP/1.1 over TLS 1.3) against a pinned nginx, $CONNECTIONS connections, ${DURATION}s × $RUNS:"
python3 bench/lib/summary.py wrk-https <"$work/rows"
fi
