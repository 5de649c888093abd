#!/usr/bin/env bash
# benchrig resp beside redis-benchmark (and memtier_benchmark when it is
# installed: Debian bookworm does not package it) against one redis-server
# that this script starts: redis-server on SERVER_CPU, every client on
# CLIENT_CPU (taskset; benchrig with GOMAXPROCS=1, redis-benchmark with its
# default single thread), the same 64 connections and pipeline depth, the
# same request count N per case, each tool RUNS times, interleaved. Prints
# req/s and requests per client CPU-second (user+sys of the whole client
# process, getrusage) as median [min–max], and each tool's ratio to
# redis-benchmark; each table ends with redis-server's CPU per request
# under each client (bench/lib/measure.py, SERVER_PID), and
# benchrig(load-window) is benchrig's own report of its CPU over the load
# window, without start-up.
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
# benchrig's closed loop goes on io_uring by default (placement.io_uring
# auto: one io_uring_enter a pass for every send and the wait, where epoll
# takes an epoll_wait, a read and a write per connection);
# "benchrig-epoll" is the same build with --io-uring off, interleaved.
#
# The seeds' cases, json-mget-1 and json-mget-64: the same rows (~163 bytes
# of JSON each) under keys in the seeds' template form
# CRUD:db.public.items:{"id":N}, MGET of 1 and of 64 keys. "benchrig" runs
# them as a user checking the cache would: it fills the keys itself (--fill,
# the reference of the check) and compares every value of every reply with
# the row filled (--validate-sampled 1), counting hits and nils exactly as it
# always does; "benchrig-novalidate" is the same load without the comparison
# (and without the fill), to show what the check costs. Each table is headed
# by the reply bytes per request of both tools (redis-benchmark's measured by
# sending its command once; benchrig's from its results), so that both are
# seen to fetch the same bytes. For MGET of 1 key redis-benchmark reads key 1
# every time and benchrig cycles keys 1 … 64 (one or two id digits: a byte
# apart).
#
#   bench/resp-peers.sh                      # 3 runs, default request counts
#   RUNS=5 SCALE=2 bench/resp-peers.sh       # 5 runs, twice the requests
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/resp-peers.sh   # also an older build, as "benchrig-before"
#   EPOLL=0 bench/resp-peers.sh              # without the benchrig-epoll rows (benchrig --io-uring off)
#   URING=1 bench/resp-peers.sh              # also the floor on io_uring (floor --uring), as "floor-uring"
#   CLIENT_QUOTA=0.3 bench/resp-peers.sh   # every client limited to 0.3 of a CPU (bench/lib/quota.sh): throughput per client core at saturation
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
# shellcheck source=lib/quota.sh
. bench/lib/quota.sh
# shellcheck source=lib/measure.sh
. bench/lib/measure.sh
CONNECTIONS=${CONNECTIONS:-64}
PIPELINE=${PIPELINE:-16}
RUNS=${RUNS:-3}
SCALE=${SCALE:-1}
EPOLL=${EPOLL:-1}
URING=${URING:-0}
export URING # bench/floor/floor.sh builds the floor with io_uring too
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
	quota_stop
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
quota_init "$work"

command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || {
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
}
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
memtier=$(command -v memtier_benchmark || true)
[ -n "$memtier" ] || echo "memtier_benchmark: not installed (Debian bookworm has no package); skipped" >&2
go build -o "$work/benchrig" ./cmd/benchrig
floor=$(bench/floor/floor.sh build "$work")
FLOOR_DURATION=${FLOOR_DURATION:-3}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c "$SERVER_CPU" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
	--dir "$work" --maxclients 1000 --daemonize no >"$work/redis.log" 2>&1 &
server_pid=$!
export SERVER_PID=$server_pid # measure.py: the server's CPU under each client
for _ in $(seq 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
redis-cli -p "$port" ping | grep -q PONG || { echo "redis-server did not start:" >&2; cat "$work/redis.log" >&2; exit 1; }
"$work/benchrig" resp --addr "127.0.0.1:$port" --fill --keyspace 64 -c 1 -n 1 --json >/dev/null
jkey='CRUD:{db}.public.items:{"id":{id}}'
"$work/benchrig" resp --addr "127.0.0.1:$port" --fill --key "$jkey" --db db --keyspace 64 -c 1 -n 1 --json >/dev/null
echo "server: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') pid $server_pid on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU;" \
	"$CONNECTIONS connections, $RUNS runs each" >&2

keys64=$(seq -f 'item:%g' 1 64 | tr '\n' ' ')
jkeys64=$(seq -f 'CRUD:db.public.items:{"id":%g}' 1 64 | tr '\n' ' ')
jflags="--key $jkey --db db" # no blank inside the template: one word after splitting
check="--fill --validate-sampled 1"

# reply_bytes CMD ARG…: the size on the wire of the server's reply to one
# command, sent once over a socket and parsed just enough to find its end.
reply_bytes() {
	python3 - "$port" "$@" <<'PY'
import socket, sys
port, argv = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in argv))
buf = b""
def need(n):
    global buf
    while len(buf) < n:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed mid-reply")
        buf += chunk
def line(at):
    while buf.find(b"\r\n", at) < 0:
        need(len(buf) + 1)
    end = buf.find(b"\r\n", at)
    return buf[at:end], end + 2
def element(at):
    head, at = line(at)
    if head[:1] == b"*":
        for _ in range(max(int(head[1:]), 0)):
            at = element(at)
        return at
    if head[:1] == b"$" and int(head[1:]) >= 0:
        need(at + int(head[1:]) + 2)
        return at + int(head[1:]) + 2
    return at
print(element(0))
PY
}

# case name, pipeline, requests, redis-benchmark command, benchrig flags,
# and the flags of benchrig's check (when set, a benchrig-novalidate row runs
# without them)
cases=(
	"get|1|$((200000 * SCALE))|GET item:1|--command GET|"
	"mget-1|1|$((200000 * SCALE))|MGET item:1|--command MGET --batch 1|"
	"mget-64|1|$((100000 * SCALE))|MGET $keys64|--command MGET --batch 64|"
	"get-p$PIPELINE|$PIPELINE|$((2000000 * SCALE))|GET item:1|--command GET|"
	"json-mget-1|1|$((200000 * SCALE))|MGET ${jkeys64%% *}|--command MGET --batch 1 $jflags|$check"
	"json-mget-64|1|$((100000 * SCALE))|MGET $jkeys64|--command MGET --batch 64 $jflags|$check"
)

: >"$work/rows"
: >"$work/bytes"
for run in $(seq "$RUNS"); do
	for c in "${cases[@]}"; do
		IFS='|' read -r name p n rbcmd brflags checkflags <<<"$c"
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

		if [ "$name" = get ]; then
			# the syscall floor (bench/floor/floor.c): GET of a fixed
			# value (item:1, as the others), one read and one write per reply, nothing parsed
			cpu=$(measure "$floor" resp 127.0.0.1 "$port" "$CONNECTIONS" "$FLOOR_DURATION" item:1 | cpu_of)
			read -r _ reqs _ secs <"$work/out"
			echo "$name floor $reqs $secs $cpu" >>"$work/rows"
			if [ "$URING" = 1 ]; then
				cpu=$(measure "$floor" --uring resp 127.0.0.1 "$port" "$CONNECTIONS" "$FLOOR_DURATION" item:1 | cpu_of)
				read -r _ reqs _ secs <"$work/out"
				echo "$name floor-uring $reqs $secs $cpu" >>"$work/rows"
			fi
		fi

		epoll=
		[ "$EPOLL" = 1 ] && epoll=benchrig-epoll
		for tool in benchrig $epoll ${BENCHRIG_BEFORE:+benchrig-before} ${checkflags:+benchrig-novalidate}; do
			bin=$work/benchrig extra=$checkflags
			[ "$tool" = benchrig-before ] && bin=$BENCHRIG_BEFORE
			[ "$tool" = benchrig-novalidate ] && extra=
			[ "$tool" = benchrig-epoll ] && extra="$checkflags --io-uring off"
			# shellcheck disable=SC2086
			cpu=$(GOMAXPROCS=$(brprocs) measure "$bin" resp --addr "127.0.0.1:$port" $brflags $extra $(nocal "$bin") --keyspace 64 \
				-c "$CONNECTIONS" -p "$p" -n "$n" --json | cpu_of)
			read -r reqs secs bytes < <(python3 -c 'import json,sys
s=[json.loads(x) for x in open(sys.argv[1]) if x.strip() and json.loads(x).get("type") == "sample"][0]; l=s["load"]; st=s.get("stats") or {}
if st.get("client_mismatches", 0): sys.exit("%s: %d values differ from the rows filled" % (sys.argv[2], st["client_mismatches"]))
print(l["requests"], l["seconds"], l["bytes"] / max(l["requests"], 1))' "$work/out" "$tool")
			echo "$name $tool $reqs $secs $cpu" >>"$work/rows"
			echo "$name $tool $bytes" >>"$work/bytes"
			if [ "$tool" = benchrig ]; then
				echo "$name benchrig(load-window) $(window_cpu)" >>"$work/rows"
			fi
		done
	done
	echo "run $run done" >&2
done

echo
pinning="a pinned"
[ "$PINNED" = 0 ] && pinning="an unpinned"
echo "RESP against $pinning redis-server, $CONNECTIONS connections, $RUNS runs per tool and case, interleaved"
echo "(client CPU = user+sys of the whole client process, getrusage; requests are commands: an MGET of 64 keys is one):"
for c in "${cases[@]}"; do
	IFS='|' read -r name _ _ rbcmd _ _ <<<"$c"
	echo
	echo "### $name"
	# shellcheck disable=SC2086
	echo "reply bytes per request: redis-benchmark $(reply_bytes $rbcmd);" \
		"$(grep "^$name " "$work/bytes" | python3 -c 'import sys
seen = {}
for l in sys.stdin:
    _, tool, b = l.split(); seen.setdefault(tool, float(b))
print("; ".join("%s %.1f" % kv for kv in seen.items()))')"
	echo
	grep "^$name " "$work/rows" | cut -d' ' -f2- | python3 bench/lib/summary.py redis-benchmark
	if [ "$name" = get ]; then
		echo
		echo "The same, each tool's ratio to the floor (bench/floor/floor.c):"
		grep "^$name " "$work/rows" | cut -d' ' -f2- | python3 bench/lib/summary.py floor
	fi
done
