#!/usr/bin/env bash
# benchrig http --http2 beside h2load (nghttp2) against the same pinned
# HTTP/2 server: nginx (one worker, TLS 1.3, AES-128-GCM, bench/lib/nginx.sh)
# on CPU 0, every client on CPU 1 (one thread each), same connections,
# streams per connection and duration, RUNS times interleaved. Prints req/s
# and requests per client CPU-second as median [min–max], and the ratio to
# h2load.
#
#   bench/h2-peers.sh                                  # 10 connections × 10 streams, 5 s, 3 runs
#   CONNECTIONS=4 STREAMS=100 DURATION=10 RUNS=5 bench/h2-peers.sh
#   H2C=1 bench/h2-peers.sh     # cleartext HTTP/2 (prior knowledge) instead of TLS
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/h2-peers.sh   # also an older build, interleaved, as "benchrig-before"
#   COALESCE_OFF=1 bench/h2-peers.sh   # also benchrig --coalesce off (io_uring, every answer handled as it comes), as "benchrig-nocoalesce"
#   BUSY_POLL=20us bench/h2-peers.sh   # also benchrig --busy-poll 20us, interleaved, as "benchrig-busypoll"
#   CLIENT_QUOTA=0.3 bench/h2-peers.sh   # every client limited to 0.3 of a CPU (bench/lib/quota.sh): throughput per client core at saturation
#   RATE=5000 TIMER_SLACK=1ms bench/h2-peers.sh   # also benchrig --timer-slack 1ms, as "benchrig-slack"
#   RATE=5000 bench/h2-peers.sh   # open model: 5000 req/s in all (h2load --rps RATE/CONNECTIONS per connection, benchrig --rate RATE), the streams carrying them; compare client µs per request
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
# shellcheck source=lib/quota.sh
. bench/lib/quota.sh
# shellcheck source=lib/measure.sh
. bench/lib/measure.sh
CONNECTIONS=${CONNECTIONS:-10}
STREAMS=${STREAMS:-10}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
H2C=${H2C:-0}
RATE=${RATE:-}
if [ -n "$RATE" ] && { ! [[ "$RATE" =~ ^[0-9]+$ ]] || [ "$RATE" -lt "$CONNECTIONS" ] || [ $((RATE % CONNECTIONS)) -ne 0 ]; }; then
	echo "RATE must be a whole number of requests per second, a multiple of CONNECTIONS ($CONNECTIONS): h2load's --rps is per connection; got $RATE" >&2
	exit 2
fi
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

work=$(mktemp -d -t benchrig-h2peers.XXXXXX)
source bench/lib/nginx.sh
cleanup() {
	stop_nginx
	quota_stop
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
quota_init "$work"

command -v h2load >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client >/dev/null; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
make -s build >/dev/null

start_nginx "$work" "$SERVER_CPU"
export SERVER_PID=$nginx_pid # measure.py: the server's CPU under each client
url="https://127.0.0.1:$nginx_port/"
flags=(--http2 --insecure)
what="over TLS 1.3"
if [ "$H2C" = 1 ]; then
	url="http://127.0.0.1:$nginx_h2c_port/" # h2load: prior knowledge for http://
	flags=(--h2c)
	what="cleartext (h2c, prior knowledge)"
fi
echo "server: nginx pid $nginx_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; $CONNECTIONS connections × $STREAMS streams, ${DURATION}s, $RUNS runs each; $(uptime)" >&2


: >"$work/rows"
: >"$work/lags"
for run in $(seq "$RUNS"); do
	# h2load: one thread (-t1), as the client has one core; -D runs for a duration.
	cpu=$(measure h2load -t1 -c"$CONNECTIONS" -m"$STREAMS" ${RATE:+--rps=$((RATE / CONNECTIONS))} -D"$DURATION" "$url" | cpu_of)
	reqs=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$work/out")
	echo "h2load $reqs $DURATION $cpu" >>"$work/rows"

	for tool in benchrig ${BENCHRIG_BEFORE:+benchrig-before} ${BUSY_POLL:+benchrig-busypoll} ${TIMER_SLACK:+benchrig-slack} ${COALESCE_OFF:+benchrig-nocoalesce}; do
		bin=./bin/benchrig
		[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
		cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" http "$url" "${flags[@]}" $(nocal "$bin") $(busypoll "$tool") $(slack "$tool") $(nocoalesce "$tool") -c "$CONNECTIONS" --streams "$STREAMS" ${RATE:+--rate "$RATE"} -d "${DURATION}s" --json | cpu_of)
		read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds)
		echo "$tool $reqs $secs $cpu" >>"$work/rows"
		if [ -n "$RATE" ]; then
			python3 bench/lib/lag.py "$work/out" "$tool" >>"$work/lags"
		fi
	done
	echo "run $run done" >&2
done
echo
echo "HTTP/2 GET $what against a pinned nginx, $CONNECTIONS connections × $STREAMS streams${RATE:+ at a constant $RATE req/s}, ${DURATION}s × $RUNS (client CPU = user+sys of the whole client process, getrusage):"
python3 bench/lib/summary.py h2load <"$work/rows"
if [ -n "$RATE" ]; then
	echo
	echo "h2load --rps sends on libev's timers, which wake to the millisecond (its writes and epoll_waits per request, with strace -c, say how many requests leave together); benchrig's schedule lag per run:"
	cat "$work/lags"
fi

