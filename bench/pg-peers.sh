#!/usr/bin/env bash
# benchrig pg beside pgbench against the same PostgreSQL server: the server
# (started here with initdb/pg_ctl in a temporary directory, as the postgres
# user when run as root) pinned to SERVER_CPU, every client pinned to
# CLIENT_CPU, the same connections, duration and queries, each tool RUNS
# times, interleaved. Prints tps / req/s and requests per client CPU-second
# as median [min–max] for two workloads, and each tool's ratio to pgbench.
#
#   bench/pg-peers.sh                  # 64 connections, 5 s, 3 runs
#   CONNECTIONS=16 DURATION=10 RUNS=5 bench/pg-peers.sh
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/pg-peers.sh   # also an older build, interleaved, as "benchrig-before"
#   CLIENT_QUOTA=0.3 bench/pg-peers.sh   # every client limited to 0.3 of a CPU (bench/lib/quota.sh): throughput per client core at saturation
#   PINNED=0 bench/pg-peers.sh      # unpinned: every process on every CPU, benchrig's own GOMAXPROCS
#   SERVER_CPU=0,1 CLIENT_CPU=0,1 BENCHRIG_PROCS=all bench/pg-peers.sh   # the same, GOMAXPROCS given
#
# The two workloads, with the items table of `benchrig pg --ephemeral`
# (4096 rows: id bigint primary key, revision, a 128-byte payload):
#
#   single key  SELECT row_to_json(t) FROM items t WHERE id = $1
#               pgbench: \set id random(1, 4096), -M prepared;
#               benchrig: --path prepared-one --batch 1 --workload uniform
#               (keys drawn uniformly from 1…4096 too).
#   64 keys     SELECT id, row_to_json(t) FROM items t WHERE id = ANY(…)
#               pgbench cannot bind an array variable, so its script draws
#               64 keys with \set k1 … \set k64 random(1, 4096) and sends
#               ANY(ARRAY[:k1, …, :k64]::bigint[]): one prepared statement
#               with 64 bigint parameters, the same index scan on the server;
#               benchrig: --path any --batch 64 --workload uniform (one
#               bigint[] parameter, rows decoded from JSON and put back in
#               key order on the client, which pgbench does not do).
#
# benchrig--nodecode (64 keys, without the sampler's PSS readings) reads,
# frames, counts and places the rows without parsing their JSON, as
# pgbench discards them (pg driver Config.SkipDecode): what decoding costs
# the client. It runs when the binary takes --skip-decode; otherwise the
# script says so.
#
# Client CPU is user+sys of the whole client process (bench/lib/measure.py,
# getrusage of the children): for benchrig that includes its start-up,
# pre-flight and the resource sampler, so a second benchrig row gives the CPU
# it reports for the load window alone. The benchrig--no-pss rows run without
# the sampler's PSS readings (--no-pss), whose cost grows with the server's
# mapped memory (~0.1 s each for 70 backends over a 100k-row table): the
# load generator's own cost.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
# shellcheck source=lib/quota.sh
. bench/lib/quota.sh
# shellcheck source=lib/measure.sh
. bench/lib/measure.sh
# shellcheck source=lib/pg.sh
. bench/lib/pg.sh
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
ROWS=${ROWS:-4096}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
# GOMAXPROCS of benchrig: 1 (one client core, as pgbench -j 1 has one
# thread), or all (the default of a user's run: every core it may use).
# pinned: 1; unpinned (PINNED=0, bench/lib/nocalibrate.sh): benchrig's own
BENCHRIG_PROCS=${BENCHRIG_PROCS:-$(brprocs)}
[ "$BENCHRIG_PROCS" = all ] && BENCHRIG_PROCS=$(taskset -c "$CLIENT_CPU" nproc)

command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }

work=$(mktemp -d -t benchrig-pg-peers.XXXXXX)
cleanup() {
	pg_stop
	quota_stop
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
quota_init "$work"
pg_init

benchrig=${BENCHRIG:-}
if [ -z "$benchrig" ]; then
	go build -o "$work/benchrig" ./cmd/benchrig
	benchrig=$work/benchrig
fi

# nodecode BIN: the flag that skips decoding, when BIN has it.
nodecode() { "$1" pg --help 2>&1 | grep -q -- '--skip-decode' && echo --skip-decode; true; }
skip=$(nodecode "$benchrig")
[ -n "$skip" ] || echo "benchrig pg has no --skip-decode: no benchrig--nodecode rows" >&2

pg_start "$CONNECTIONS" "$SERVER_CPU"
export SERVER_PID=$postmaster # measure.py: the server's CPU (backends included) under each client
pg_items "$ROWS"

printf '\\set id random(1, %d)\nSELECT row_to_json(t) FROM items t WHERE id = :id;\n' "$ROWS" >"$work/one.sql"
{
	for i in $(seq 64); do printf '\\set k%d random(1, %d)\n' "$i" "$ROWS"; done
	printf 'SELECT id, row_to_json(t) FROM items t WHERE id = ANY(ARRAY['
	for i in $(seq 64); do printf ':k%d' "$i"; [ "$i" -lt 64 ] && printf ', '; done
	printf ']::bigint[]);\n'
} >"$work/any.sql"

echo "server: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU (benchrig GOMAXPROCS=${BENCHRIG_PROCS:-its own choice}); $CONNECTIONS connections, ${DURATION}s, $RUNS runs each" >&2


# pgbench_row TOOL SCRIPT ROWS: one pgbench run, one thread (the client
# has one core); seconds = transactions ÷ tps (without connection time).
pgbench_row() {
	local cpu n tps
	cpu=$(measure "$pgbin/pgbench" -n -M prepared -c "$CONNECTIONS" -j 1 -T "$DURATION" -f "$2" "$dsn" | cpu_of)
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/out")
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/out")
	echo "$1 $n $(python3 -c "print($n / $tps)") $cpu" >>"$3"
}

# benchrig_row TOOL ROWS ARGS…: one benchrig pg run, GOMAXPROCS=BENCHRIG_PROCS,
# no idle phases; also a row with the client CPU of the load window alone.
benchrig_row() {
	local tool=$1 rows=$2 cpu bin=$benchrig
	shift 2
	case "$tool" in benchrig-before*) bin=$BENCHRIG_BEFORE ;; esac
	cpu=$(GOMAXPROCS=$BENCHRIG_PROCS measure "$bin" pg --dsn "$dsn" -c "$CONNECTIONS" -d "${DURATION}s" --rows "$ROWS" --workload uniform \
		--baseline 0 --warmup 0 --settle 0 --recovery 0 $(nocal "$bin") --json "$@" | cpu_of)
	python3 - "$work/out" "$tool" "$cpu" >>"$rows" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
s = [x for x in lines if x.get("type") == "sample"][0]
l = s["load"]
if s.get("error") or l["errors"] + l["timeouts"] + l["unexpected"]:
    sys.exit("benchrig failed: %s %s" % (s.get("error"), l.get("messages")))
c = l["client"]
print(sys.argv[2], l["requests"], l["seconds"], sys.argv[3])
print(sys.argv[2] + "(load-window)", l["requests"], l["seconds"], c["user_seconds"] + c["system_seconds"])
PY
}

: >"$work/rows1"
: >"$work/rows64"
for run in $(seq "$RUNS"); do
	pgbench_row pgbench "$work/one.sql" "$work/rows1"
	benchrig_row benchrig "$work/rows1" --path prepared-one --batch 1
	benchrig_row benchrig--no-pss "$work/rows1" --path prepared-one --batch 1 --no-pss
	if [ -n "${BENCHRIG_BEFORE:-}" ]; then benchrig_row benchrig-before "$work/rows1" --path prepared-one --batch 1; fi
	pgbench_row pgbench "$work/any.sql" "$work/rows64"
	benchrig_row benchrig "$work/rows64" --path any --batch 64
	benchrig_row benchrig--no-pss "$work/rows64" --path any --batch 64 --no-pss
	if [ -n "$skip" ]; then benchrig_row benchrig--nodecode "$work/rows64" --path any --batch 64 --no-pss "$skip"; fi
	if [ -n "${BENCHRIG_BEFORE:-}" ]; then benchrig_row benchrig-before "$work/rows64" --path any --batch 64; fi
	echo "run $run done" >&2
done
echo
echo "Single-key SELECT row_to_json(t) … WHERE id = \$1, prepared, $CONNECTIONS connections, ${DURATION}s × $RUNS (client CPU = user+sys of the client process):"
python3 bench/lib/summary.py pgbench <"$work/rows1"
echo
echo "64-key SELECT id, row_to_json(t) … WHERE id = ANY(…), prepared, $CONNECTIONS connections, ${DURATION}s × $RUNS:"
python3 bench/lib/summary.py pgbench <"$work/rows64"
