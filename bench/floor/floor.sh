#!/usr/bin/env bash
# The syscall floor of a closed-loop client (bench/floor/floor.c: one epoll
# thread, a fixed request written, fixed-size responses counted, nothing
# parsed; one read and one write per response) against a pinned server:
# server on CPU 0, the floor client on CPU 1, CONNECTIONS connections for
# DURATION seconds, RUNS times. Prints each run's requests and client CPU
# (user+sys, getrusage) and the summary every peers script prints: req/s,
# requests per client CPU-second, client µs/request, median [min–max].
# Every other client's figure can be read as a fraction of this one.
#
#   bench/floor/floor.sh http                 # starts bin/hello (GOMAXPROCS=1) on CPU 0
#   bench/floor/floor.sh http 127.0.0.1:8080  # a server already running (pin it yourself)
#   bench/floor/floor.sh resp                 # starts redis-server on CPU 0, GET key (a fixed value)
#   CONNECTIONS=50 DURATION=10 RUNS=5 bench/floor/floor.sh http
#   URING=1 bench/floor/floor.sh http         # also the floor on io_uring (floor --uring), interleaved, as "floor-uring"
#   bench/floor/floor.sh build DIR            # only build; prints the binary's path (for the peers scripts)
set -euo pipefail
cd "$(dirname "$0")/../.."
CONNECTIONS=${CONNECTIONS:-10}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
URING=${URING:-0}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

# build DIR: compile the floor client into DIR, print its path.
# With URING=1 it is built with io_uring (liburing-dev, installed if
# missing), so that `floor --uring` runs.
build() {
	command -v gcc >/dev/null || { echo "gcc is needed (apt-get install gcc)" >&2; exit 1; }
	if [ "$URING" = 1 ]; then
		[ -e /usr/include/liburing.h ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev >/dev/null; }
		gcc -O2 -Wall -Wextra -DFLOOR_URING -o "$1/floor" bench/floor/floor.c -luring
	else
		gcc -O2 -Wall -Wextra -o "$1/floor" bench/floor/floor.c
	fi
	echo "$1/floor"
}

mode=${1:-http}
if [ "$mode" = build ]; then
	build "${2:?usage: floor.sh build DIR}"
	exit 0
fi
case "$mode" in
http | resp) ;;
*)
	echo "usage: floor.sh http|resp [HOST:PORT] | build DIR" >&2
	exit 2
	;;
esac
target=${2:-}

work=$(mktemp -d -t benchrig-floor.XXXXXX)
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
floor=$(build "$work")

if [ -z "$target" ] && [ "$mode" = http ]; then
	make -s build >/dev/null
	GOMAXPROCS=1 taskset -c "$SERVER_CPU" ./bin/hello -addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do target=$(sed -n 's/^listening on //p' "$work/server.log"); [ -n "$target" ] && break; sleep 0.05; done
	echo "server: bin/hello pid $server_pid on CPU $SERVER_CPU" >&2
elif [ -z "$target" ]; then
	command -v redis-server >/dev/null || { echo "redis-server is needed (apt-get install redis-server)" >&2; exit 1; }
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	taskset -c "$SERVER_CPU" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
		--dir "$work" --daemonize no >"$work/redis.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
	redis-cli -p "$port" set key '{"id":1,"name":"item 1"}' >/dev/null
	target=127.0.0.1:$port
	echo "server: redis-server pid $server_pid on CPU $SERVER_CPU (GET key: a fixed value)" >&2
fi
host=${target%:*} port=${target##*:}
echo "floor client on CPU $CLIENT_CPU; $mode $target, $CONNECTIONS connections, ${DURATION}s, $RUNS runs; $(uptime)" >&2

: >"$work/rows"
for run in $(seq "$RUNS"); do
	tools=floor
	[ "$URING" = 1 ] && tools="floor floor-uring"
	for tool in $tools; do
		flag=
		[ "$tool" = floor-uring ] && flag=--uring
		cpu=$(python3 bench/lib/measure.py "$work/out" -- taskset -c "$CLIENT_CPU" "$floor" $flag "$mode" "$host" "$port" "$CONNECTIONS" "$DURATION" |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"], d["sys"])')
		read -r user sys <<<"$cpu"
		read -r _ reqs _ secs <"$work/out"
		python3 -c 'import sys; r, u, s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"run {sys.argv[4]} {sys.argv[5]}: {r} requests, user {u:.2f} s + sys {s:.2f} s = {u + s:.2f} s CPU, {r / (u + s) if u + s else 0:,.0f} requests per client CPU-second")' \
			"$reqs" "$user" "$sys" "$run" "$tool"
		echo "$tool $reqs $secs $(python3 -c "print($user + $sys)")" >>"$work/rows"
	done
done
echo
echo "$mode floor against $target, $CONNECTIONS connections, ${DURATION}s × $RUNS (client CPU = user+sys of the client process, getrusage):"
python3 bench/lib/summary.py floor <"$work/rows"
