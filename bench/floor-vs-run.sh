#!/usr/bin/env bash
# benchrig's own floor beside its runs, at the same connection counts: for
# HTTP/1.1 (bin/hello), RESP GET (redis-server) and pg's prepared one-key
# read (PostgreSQL 15), each server on CPU 0, one `benchrig PROTO … -c
# 1,8,64` run, pinned (taskset -c 1) and unpinned (every CPU). Every run
# measures its floor before its first sample, at its own connection counts
# (results header `floor`); this prints that floor's client CPU per request
# beside each sample's (whole load window, getrusage), so the floor can be
# seen to be a lower bound at every level. RUNS times each, interleaved.
#
#   bench/floor-vs-run.sh             # 2 s per level, RUNS=3
#   RUNS=5 DURATION=3 bench/floor-vs-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DURATION=${DURATION:-2}
LEVELS=${LEVELS:-1,8,64}

work=$(mktemp -d -t benchrig-floorrun.XXXXXX)
hello_pid= redis_pid=
# shellcheck source=lib/pg.sh
. bench/lib/pg.sh
cleanup() {
	for p in $hello_pid $redis_pid; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	pg_stop
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
make -s build >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

GOMAXPROCS=1 taskset -c 0 ./bin/hello -addr 127.0.0.1:0 >"$work/hello.log" 2>&1 &
hello_pid=$!
for _ in $(seq 100); do haddr=$(sed -n 's/^listening on //p' "$work/hello.log"); [ -n "$haddr" ] && break; sleep 0.05; done
rport=$(free_port)
taskset -c 0 redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --dir "$work" --daemonize no >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
./bin/benchrig resp --addr "127.0.0.1:$rport" --fill --keyspace 64 -c 1 -n 1 --json >/dev/null
pg_init
pg_start 80 0
pg_items 4096

echo "servers on CPU 0 (bin/hello GOMAXPROCS=1, redis-server, PostgreSQL); ${DURATION}s per level, levels $LEVELS, $RUNS runs; $(uptime)"
: >"$work/rows"
for run in $(seq "$RUNS"); do
	for place in pinned unpinned; do
		pin=(taskset -c 1)
		[ "$place" = unpinned ] && pin=(taskset -c "0-$(($(nproc) - 1))")
		for proto in http resp pg; do
			case $proto in
			http) args=(http "http://$haddr/") ;;
			resp) args=(resp --addr "127.0.0.1:$rport" --command GET --keyspace 64) ;;
			pg) args=(pg --dsn "$dsn" --path prepared-one --batch 1 --rows 4096 --workload uniform --baseline 0 --warmup 0 --settle 0 --recovery 0) ;;
			esac
			rm -f "$work/r.json"
			"${pin[@]}" ./bin/benchrig "${args[@]}" -c "$LEVELS" -d "${DURATION}s" -o "$work/r.json" >/dev/null 2>"$work/err" ||
				{ echo "benchrig $proto ($place) failed:" >&2; tail -5 "$work/err" >&2; exit 1; }
			python3 - "$work/r.json" "$place" "$proto" >>"$work/rows" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
h = [x for x in lines if x.get("type") == "header"][0]
floor = {e["connections"]: e for e in h["floor"]["protocols"] if e["protocol"] == sys.argv[3]}
for s in (x for x in lines if x.get("type") == "sample"):
    l = s["load"]; c = l["client"]
    n = int(s["key"].split("/c=")[1].split("/")[0])
    run = (c["user_seconds"] + c["system_seconds"]) / l["requests"] * 1e6
    print(sys.argv[2], sys.argv[3], n, "%.2f" % floor[n]["client_cpu_us"], "%.2f" % run)
PY
		done
	done
	echo "run $run done" >&2
done
python3 - "$work/rows" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(lambda: ([], []))
for line in open(sys.argv[1]):
    place, proto, n, f, r = line.split()
    rows[(place, proto, int(n))][0].append(float(f))
    rows[(place, proto, int(n))][1].append(float(r))
def med(v): return "%.1f [%.1f–%.1f]" % (statistics.median(v), min(v), max(v))
print("\nClient CPU µs per request: the floor measured before the run at each level, beside the run's own sample at that level (median [min–max]);")
print("below: runs whose figure was under their own floor.\n")
print("| placement | protocol | connections | floor | run | run ÷ floor | below |")
print("|---|---|---|---|---|---|---|")
for (place, proto, n), (f, r) in sorted(rows.items()):
    below = sum(1 for a, b in zip(f, r) if b < a)
    print("| %s | %s | %d | %s | %s | %.2f | %d of %d |" % (place, proto, n, med(f), med(r), statistics.median(r) / statistics.median(f), below, len(f)))
PY
