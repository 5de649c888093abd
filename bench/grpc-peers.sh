#!/usr/bin/env bash
# benchrig grpc beside ghz against the same pinned gRPC server: grpc-go's,
# internal/grpcephemeral's greeter-server (cleartext HTTP/2, GOMAXPROCS=1) on
# CPU 0, every client on CPU 1 (one P each: benchrig with GOMAXPROCS=1, ghz
# with --cpus 1), unary SayHello with the same request, the same connections,
# concurrent calls per connection and duration, RUNS times interleaved.
# Prints req/s and requests per client CPU-second as median [min–max], and
# the ratio to ghz.
#
# ghz is pinned to v0.121.0, the newest tagged release (2025-12-07); the
# module proxy's version list shows only v0.93.0, but v0.121.0 resolves by
# name. It is installed once (go install) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/benchrig-bench/ghz-v0.121.0/. ghz's -c is
# its total concurrency, spread over --connections: CONNECTIONS × STREAMS.
# With -z it cuts the calls in flight when the time is up and reports them
# as errors (UNAVAILABLE): only its OK calls are counted, over its own
# measured duration ("total" of its JSON output).
#
#   bench/grpc-peers.sh                                # 4 connections × 16 streams, 5 s, 5 runs
#   CONNECTIONS=8 STREAMS=32 DURATION=10 RUNS=3 bench/grpc-peers.sh
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/grpc-peers.sh   # also an older build, interleaved, as "benchrig-before"
#   CALL=server-stream bench/grpc-peers.sh            # server streaming: Lots, MESSAGES (10) replies per call
#   RATE=5000 bench/grpc-peers.sh                      # open model: 5000 calls/s in all (ghz --rps, benchrig --rate) over the same streams; compare client µs per call
#   RATE=5000 TIMER_SLACK=1ms bench/grpc-peers.sh      # also benchrig --timer-slack 1ms, as "benchrig-slack"
#
# With CALL=server-stream each call is Greeter/Lots answering MESSAGES
# messages; both tools count calls (benchrig checks each call got all of
# them, --expect-messages).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
CONNECTIONS=${CONNECTIONS:-4}
STREAMS=${STREAMS:-16}
DURATION=${DURATION:-5}
RUNS=${RUNS:-5}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
GHZ_VERSION=v0.121.0
CALL=${CALL:-unary}
MESSAGES=${MESSAGES:-10}
RATE=${RATE:-}
if [ -n "$RATE" ] && ! [[ "$RATE" =~ ^[1-9][0-9]*$ ]]; then
	echo "RATE must be a whole number of calls per second, got $RATE" >&2
	exit 2
fi
export PATH=$PATH:/usr/local/go/bin

work=$(mktemp -d -t benchrig-grpc-peers.XXXXXX)
server_pid=
stop_server() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
}
cleanup() {
	stop_server
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
ghz_dir=${XDG_CACHE_HOME:-$HOME/.cache}/benchrig-bench/ghz-$GHZ_VERSION
ghz=$ghz_dir/ghz
if [ ! -x "$ghz" ]; then
	echo "installing ghz $GHZ_VERSION into $ghz_dir" >&2
	mkdir -p "$ghz_dir"
	GOBIN=$ghz_dir go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
fi
make -s build >/dev/null
./bin/benchrig grpc --help >/dev/null 2>&1 || { echo "./bin/benchrig has no grpc command" >&2; exit 1; }
go build -o "$work/greeter-server" ./internal/grpcephemeral/cmd/greeter-server
proto=$work/greeter.proto
cp internal/grpcephemeral/greeter.proto "$proto"

# The server: one P when pinned (brprocs), its address on its first line.
GOMAXPROCS=$(brprocs) taskset -c "$SERVER_CPU" "$work/greeter-server" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/server.out" && break; sleep 0.05; done
port=$(sed -n '1s/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/server.out")
[ -n "$port" ] || { echo "greeter-server did not start:" >&2; cat "$work/server.err" >&2; exit 1; }
echo "server: greeter-server (grpc-go) pid $server_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; ghz $GHZ_VERSION;" \
	"$CONNECTIONS connections × $STREAMS streams, ${DURATION}s, $RUNS runs each; $(uptime)" >&2

measure() { python3 bench/lib/measure.py "$work/out" -- taskset -c "$CLIENT_CPU" "$@"; }
cpu_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"]+d["sys"])'; }
case $CALL in
unary)
	method=SayHello data='{"name":"bench","id":1}' extra=() what="unary SayHello" ;;
server-stream)
	method=Lots data="{\"name\":\"bench\",\"count\":$MESSAGES}" extra=(--expect-messages "$MESSAGES")
	what="server streaming Lots ($MESSAGES messages per call)" ;;
*)
	echo "CALL must be unary or server-stream, got $CALL" >&2
	exit 2 ;;
esac
ghz_cpus=$(brprocs)

: >"$work/rows"
for run in $(seq "$RUNS"); do
	cpu=$(measure "$ghz" --insecure --proto "$proto" --call "benchrig.test.v1.Greeter.$method" -d "$data" \
		--connections "$CONNECTIONS" -c "$((CONNECTIONS * STREAMS))" ${RATE:+--rps "$RATE"} -z "${DURATION}s" --cpus "${ghz_cpus:-$(nproc)}" \
		-O json "127.0.0.1:$port" | cpu_of)
	reqs=
	read -r reqs secs < <(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(d["statusCodeDistribution"].get("OK", 0), d["total"] / 1e9)' "$work/out") || true
	[ -n "$reqs" ] || { echo "ghz gave no result:" >&2; head -c 2000 "$work/out" >&2; exit 1; }
	echo "ghz $reqs $secs $cpu" >>"$work/rows"

	for tool in benchrig ${BENCHRIG_BEFORE:+benchrig-before} ${TIMER_SLACK:+benchrig-slack}; do
		bin=./bin/benchrig
		[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
		# shellcheck disable=SC2046 # nocal prints nothing or a few flags
		cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" grpc "127.0.0.1:$port" --insecure --proto "$proto" \
			--call "benchrig.test.v1.Greeter/$method" --data "$data" "${extra[@]}" $(nocal "$bin") $(slack "$tool") \
			-c "$CONNECTIONS" --streams "$STREAMS" ${RATE:+--rate "$RATE"} -d "${DURATION}s" --json | cpu_of)
		reqs=
		read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds 2>/dev/null) || true
		[ -n "$reqs" ] || { echo "$tool grpc gave no result:" >&2; head -c 2000 "$work/out" >&2; exit 1; }
		echo "$tool $reqs $secs $cpu" >>"$work/rows"
	done
	echo "run $run done" >&2
done
stop_server
# The server's own count: every call of every tool, ghz's cut ones included.
sed 's/^/server: /' "$work/server.err" >&2
echo
echo "gRPC $what, cleartext HTTP/2, against a pinned grpc-go server, $CONNECTIONS connections × $STREAMS streams${RATE:+ at a constant $RATE calls/s}, ${DURATION}s × $RUNS (client CPU = user+sys of the whole client process, getrusage; ghz: OK calls only):"
python3 bench/lib/summary.py ghz <"$work/rows"
