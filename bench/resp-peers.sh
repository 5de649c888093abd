#!/usr/bin/env bash
# benchrig resp beside redis-benchmark (and memtier_benchmark when it is
# installed: Debian bookworm does not package it) against one redis-server
# that this script starts: redis-server on SERVER_CPU, every client on
# CLIENT_CPU (taskset; benchrig with GOMAXPROCS=1, redis-benchmark with its
# default single thread), the same 64 connections and pipeline depth, the
# same request count N per case, each tool RUNS times, interleaved. Prints
# req/s and requests per client CPU-second (user+sys of the whole client
# process, getrusage) as median [min–max], and each tool's ratio to
# redis-benchmark.
#
# Cases: GET without pipelining, MGET of 1 key, MGET of 64 keys, GET at
# pipeline 16. The keys item:1 … item:64 hold the demo rows
# ({"id":N,"revision":0,"payload":"…128 bytes…"}), filled once by benchrig
# before the runs. redis-benchmark sends fixed keys in its custom-command mode
# (GET item:1; MGET item:1; MGET item:1 … item:64): it renders the command
# once, its cheapest mode. benchrig renders keys per request, cycling through
# item:1 … item:64 (--keyspace 64), so its MGET of 64 keys reads exactly the
# same 64 keys in the same order.
#
#   bench/resp-peers.sh                      # 3 runs, default request counts
#   RUNS=5 SCALE=2 bench/resp-peers.sh       # 5 runs, twice the requests
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/resp-peers.sh   # also an older build, as "benchrig-before"
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS=${CONNECTIONS:-64}
PIPELINE=${PIPELINE:-16}
RUNS=${RUNS:-3}
SCALE=${SCALE:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
export PATH=$PATH:/usr/local/go/bin

work=$(mktemp -d -t benchrig-resp-peers.XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
}
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
memtier=$(command -v memtier_benchmark || true)
[ -n "$memtier" ] || echo "memtier_benchmark: not installed (Debian bookworm has no package); skipped" >&2
go build -o "$work/benchrig" ./cmd/benchrig

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
	--dir "$work" --maxclients 1000 --daemonize no >"$work/redis.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
redis-cli -p "$port" ping | grep -q PONG || { echo "redis-server did not start:" >&2; cat "$work/redis.log" >&2; exit 1; }
"$work/benchrig" resp --addr "127.0.0.1:$port" --fill --keyspace 64 -c 1 -n 1 --json >/dev/null
echo "server: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') pid $server_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU;" \
	"$CONNECTIONS connections, $RUNS runs each" >&2

measure() { python3 bench/lib/measure.py "$work/out" -- taskset -c "$CLIENT_CPU" "$@"; }
cpu_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"]+d["sys"])'; }
keys64=$(seq -f 'item:%g' 1 64 | tr '\n' ' ')

# case name, pipeline, requests, redis-benchmark command, benchrig flags
cases=(
	"get|1|$((200000 * SCALE))|GET item:1|--command GET"
	"mget-1|1|$((200000 * SCALE))|MGET item:1|--command MGET --batch 1"
	"mget-64|1|$((100000 * SCALE))|MGET $keys64|--command MGET --batch 64"
	"get-p$PIPELINE|$PIPELINE|$((2000000 * SCALE))|GET item:1|--command GET"
)

: >"$work/rows"
for run in $(seq "$RUNS"); do
	for c in "${cases[@]}"; do
		IFS='|' read -r name p n rbcmd brflags <<<"$c"
		# shellcheck disable=SC2086 # word splitting of the commands is wanted
		cpu=$(measure redis-benchmark -h 127.0.0.1 -p "$port" -c "$CONNECTIONS" -P "$p" -n "$n" --csv $rbcmd | cpu_of)
		rps=$(sed -n '2p' "$work/out" | cut -d, -f2 | tr -d '"')
		echo "$name redis-benchmark $n $(python3 -c "print($n / $rps)") $cpu" >>"$work/rows"

		if [ -n "$memtier" ]; then
			# shellcheck disable=SC2086
			cpu=$(measure "$memtier" -s 127.0.0.1 -p "$port" -t 1 -c "$CONNECTIONS" --pipeline "$p" \
				--requests "$((n / CONNECTIONS))" --hide-histogram --command "$rbcmd" | cpu_of)
			read -r reqs secs < <(python3 -c 'import re,sys
t=open(sys.argv[1]).read(); m=re.search(r"^Totals\s+([\d.]+)", t, re.M); n=int(sys.argv[2])
print(n, n / float(m.group(1)))' "$work/out" "$(((n / CONNECTIONS) * CONNECTIONS))")
			echo "$name memtier_benchmark $reqs $secs $cpu" >>"$work/rows"
		fi

		for tool in benchrig ${BENCHRIG_BEFORE:+benchrig-before}; do
			bin=$work/benchrig
			[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
			# shellcheck disable=SC2086
			cpu=$(GOMAXPROCS=1 measure "$bin" resp --addr "127.0.0.1:$port" $brflags --keyspace 64 \
				-c "$CONNECTIONS" -p "$p" -n "$n" --json | cpu_of)
			read -r reqs secs < <(python3 bench/lib/sample.py "$work/out" load.requests load.seconds)
			echo "$name $tool $reqs $secs $cpu" >>"$work/rows"
		done
	done
	echo "run $run done" >&2
done

echo
echo "RESP against a pinned redis-server, $CONNECTIONS connections, $RUNS runs per tool and case, interleaved"
echo "(client CPU = user+sys of the whole client process, getrusage; requests are commands: an MGET of 64 keys is one):"
for c in "${cases[@]}"; do
	name=${c%%|*}
	echo
	echo "### $name"
	grep "^$name " "$work/rows" | cut -d' ' -f2- | python3 bench/lib/summary.py redis-benchmark
done
