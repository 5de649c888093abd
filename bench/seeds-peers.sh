#!/usr/bin/env bash
# The seeds' question (000, 001) asked of benchrig and of the peer tools
# side by side: how much faster is a batched SQL function or a RESP endpoint
# than prepared SQL, at 1 and 64 keys? One PostgreSQL (4,096 rows of the
# items table) and one redis-server filled from the same table
# (cache-aside, by benchrig, keys CRUD:db.public.items:{"id":N}), both pinned
# to SERVER_CPU, every client to CLIENT_CPU, CONNECTIONS connections, DURATION
# seconds, RUNS runs of every case, the tools interleaved.
#
#   case     pgbench / redis-benchmark                      benchrig
#   one      SELECT row_to_json(t) … WHERE t.id = :id        pg --path prepared-one --batch 1
#   any-1    … WHERE t.id = ANY(ARRAY[:k1]::bigint[])        pg --path any[array] --batch 1
#   any-64   … WHERE t.id = ANY(ARRAY[:k1,…,:k64]::bigint[]) pg --path any[array] --batch 64
#   fn-1     SELECT array_to_json(items_mget(ARRAY[…]))      pg --path sql --sql 'SELECT array_to_json(items_mget($1::bigint[]))'
#   fn-64    the same with 64 keys                           the same at --batch 64
#   resp-1   MGET of 1 key (-r ROWS: random rows)            resp --command MGET --batch 1
#   resp-64  MGET of 64 keys (-r ROWS)                       resp --command MGET --batch 64
#
# pgbench binds each key as its own parameter (it has no array variables), so
# the any and fn cases send ARRAY[$1,…,$k] from pgbench; benchrig's any[array]
# form sends the same statement text, and its sql path binds one bigint[]
# ($1) to the same function. items_mget(bigint[]) returns text[] (one JSON row
# per key, NULL for a missing one), as a batched cache lookup does. benchrig
# decodes every row (and puts it back in key order) inside the timed
# section, as the seeds' clients do; pgbench and redis-benchmark decode
# nothing: the decoder's own cost per row is `go test -bench Decode -run '^$'
# ./internal/protocol/pg/driver/`.
#
# Per case: req/s, client µs/op (user+sys of the whole client process),
# server µs/op (user+sys of the server's whole process tree over the run,
# from /proc), then the seeds' ratios computed from each tool's req/s.
#
#   bench/seeds-peers.sh                 # 64 connections, 5 s, 3 runs
#   RUNS=5 DURATION=10 bench/seeds-peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/nocalibrate.sh
. bench/lib/nocalibrate.sh
# shellcheck source=lib/pg.sh
. bench/lib/pg.sh
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-5}
RUNS=${RUNS:-3}
ROWS=${ROWS:-4096}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || { echo "redis-server and redis-benchmark are needed (redis-server, redis-tools)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }

work=$(mktemp -d -t benchrig-seeds-peers.XXXXXX)
redis_pid=
cleanup() {
	pg_stop
	if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
pg_init

go build -o "$work/benchrig" ./cmd/benchrig
benchrig=$work/benchrig
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

pg_start "$CONNECTIONS" "$SERVER_CPU"
pg_items "$ROWS"
"$pgbin/psql" -q -X -v ON_ERROR_STOP=1 "$dsn" <<SQL
CREATE FUNCTION items_mget(keys bigint[]) RETURNS text[] LANGUAGE sql STABLE AS
\$\$ SELECT array_agg(row_to_json(t)::text ORDER BY k.n) FROM unnest(keys) WITH ORDINALITY k(id, n) LEFT JOIN items t ON t.id = k.id \$\$;
SQL

redisport=$(freeport)
taskset -c "$SERVER_CPU" redis-server --port "$redisport" --bind 127.0.0.1 --save '' --appendonly no --maxclients 1000 >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redisport" ping >/dev/null 2>&1 && break; sleep 0.05; done
key='CRUD:{db}.public.items:{"id":{id}}'
"$benchrig" resp --addr "127.0.0.1:$redisport" --fill-from-pg --fill-from-pg-dsn "$dsn" --key "$key" --db db \
	--keyspace "$ROWS" -c 1 -n 1 >/dev/null 2>"$work/fill.log" || { cat "$work/fill.log" >&2; exit 1; }

# pgbench scripts: k keys drawn uniformly, bound as k parameters.
keys() { for i in $(seq "$1"); do printf '\\set k%d random(1, %d)\n' "$i" "$ROWS"; done; }
arr() { printf 'ARRAY['; for i in $(seq "$1"); do printf ':k%d' "$i"; [ "$i" -lt "$1" ] && printf ', '; done; printf ']::bigint[]'; }
printf '\\set id random(1, %d)\nSELECT row_to_json(t) FROM items t WHERE t.id = :id;\n' "$ROWS" >"$work/one.sql"
for k in 1 64; do
	{ keys "$k"; printf 'SELECT t.id, row_to_json(t) FROM items t WHERE t.id = ANY(%s);\n' "$(arr "$k")"; } >"$work/any-$k.sql"
	{ keys "$k"; printf 'SELECT array_to_json(items_mget(%s));\n' "$(arr "$k")"; } >"$work/fn-$k.sql"
done
# redis-benchmark draws keys the way benchrig does (uniform over the rows)
# with -r ROWS: each __rand_int__ becomes a 12-digit zero-padded number in
# [0, ROWS), so the rows are copied once more under those names.
mget() { printf 'MGET'; for i in $(seq "$1"); do printf ' CRUD:db.public.items:{"id":__rand_int__}'; done; }
python3 - "$redisport" "$ROWS" <<'PY'
import socket, sys
port, rows = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
def reply():
    line = f.readline()
    if line[:1] == b"$":
        n = int(line[1:])
        return None if n < 0 else f.read(n + 2)[:-2]
    return line
s.sendall(b"".join(cmd("GET", 'CRUD:db.public.items:{"id":%d}' % (i + 1)) for i in range(rows)))
vals = [reply() for _ in range(rows)]
if any(v is None for v in vals):
    sys.exit("redis is missing rows: fill failed")
s.sendall(b"".join(cmd("SET", 'CRUD:db.public.items:{"id":%012d}' % i, v.decode()) for i, v in enumerate(vals)))
for _ in range(rows):
    reply()
PY

echo "servers: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') and redis-server $(redis-server --version | awk '{print $3}' | tr -d v=) on CPU $SERVER_CPU; clients on CPU $CLIENT_CPU; $CONNECTIONS connections, ${DURATION}s, $RUNS runs each" >&2

# server_cpu PID: user+sys seconds of PID's tree, reaped children included.
server_cpu() {
	python3 - "$1" <<'PY'
import os, sys
root = int(sys.argv[1]); hz = os.sysconf("SC_CLK_TCK")
ppid, cpu = {}, {}
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        f = open(f"/proc/{p}/stat").read()
    except OSError:
        continue
    rest = f[f.rindex(")") + 2:].split()
    ppid[int(p)] = int(rest[1])
    cpu[int(p)] = sum(int(x) for x in rest[11:15])
def under(p):
    while p > 1:
        if p == root:
            return True
        p = ppid.get(p, 0)
    return False
print(sum(c for p, c in cpu.items() if under(p)) / hz)
PY
}
measure() { python3 bench/lib/measure.py "$work/out" -- taskset -c "$CLIENT_CPU" "$@"; }
cpu_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"]+d["sys"])'; }

# row CASE TOOL REQUESTS SECONDS CLIENT_CPU SERVER_CPU
: >"$work/rows"
pgbench_case() {
	local name=$1 script=$2 s0 s1 cpu n tps
	s0=$(server_cpu "$postmaster")
	cpu=$(measure "$pgbin/pgbench" -n -M prepared -c "$CONNECTIONS" -j 1 -T "$DURATION" -f "$script" "$dsn" | cpu_of)
	s1=$(server_cpu "$postmaster")
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/out")
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/out")
	echo "$name peer $n $(python3 -c "print($n / $tps)") $cpu $(python3 -c "print($s1 - $s0)")" >>"$work/rows"
}
rb_case() {
	local name=$1 k=$2 s0 s1 cpu n rps
	# about DURATION seconds of requests at this machine's rates
	n=$((DURATION * 150000))
	[ "$k" -gt 1 ] && n=$((DURATION * 30000))
	s0=$(server_cpu "$redis_pid")
	# shellcheck disable=SC2046
	cpu=$(measure redis-benchmark -h 127.0.0.1 -p "$redisport" -c "$CONNECTIONS" -n "$n" -r "$ROWS" --csv $(mget "$k") | cpu_of)
	s1=$(server_cpu "$redis_pid")
	rps=$(python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(float(r[-1][1]))' "$work/out")
	echo "$name peer $n $(python3 -c "print($n / $rps)") $cpu $(python3 -c "print($s1 - $s0)")" >>"$work/rows"
}
benchrig_case() {
	local name=$1 root=$2 cpu s0 s1
	shift 2
	s0=$(server_cpu "$root")
	cpu=$(GOMAXPROCS=1 measure "$benchrig" "$@" $(nocal "$benchrig") -c "$CONNECTIONS" --baseline 0 --warmup 0 --settle 0 --recovery 0 --no-pss --json | cpu_of)
	s1=$(server_cpu "$root")
	python3 - "$work/out" "$name" "$cpu" "$(python3 -c "print($s1 - $s0)")" >>"$work/rows" <<'PY'
import json, sys
lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
s = [x for x in lines if x.get("type") == "sample"][0]
l = s["load"]
if s.get("error") or l["errors"] + l["timeouts"] + l["unexpected"]:
    sys.exit("benchrig failed: %s %s" % (s.get("error"), l.get("messages")))
print(sys.argv[2], "benchrig", l["requests"], l["seconds"], sys.argv[3], sys.argv[4])
PY
}
pgflags=(pg --dsn "$dsn" -d "${DURATION}s" --rows "$ROWS" --workload uniform)
# warm both servers (caches, backends' catalogs) before anything is measured
"$pgbin/pgbench" -n -M prepared -c "$CONNECTIONS" -j 1 -T 2 -f "$work/any-64.sql" "$dsn" >/dev/null 2>&1
redis-benchmark -h 127.0.0.1 -p "$redisport" -c "$CONNECTIONS" -n 20000 -r "$ROWS" -q $(mget 64) >/dev/null 2>&1
# The decoder's own cost per row on the client's CPU (the seeds count
# decoding in the request; pgbench and redis-benchmark decode nothing).
GOMAXPROCS=1 taskset -c "$CLIENT_CPU" go test -bench 'Decode$' -run '^$' -benchtime 1s ./internal/protocol/pg/driver/ >"$work/decode.txt" 2>&1 || { cat "$work/decode.txt" >&2; exit 1; }
for run in $(seq "$RUNS"); do
	pgbench_case one "$work/one.sql"
	benchrig_case one "$postmaster" "${pgflags[@]}" --path prepared-one --batch 1
	for k in 1 64; do
		pgbench_case "any-$k" "$work/any-$k.sql"
		benchrig_case "any-$k" "$postmaster" "${pgflags[@]}" --path 'any[array]' --batch "$k"
		pgbench_case "fn-$k" "$work/fn-$k.sql"
		benchrig_case "fn-$k" "$postmaster" "${pgflags[@]}" --path sql --sql 'SELECT array_to_json(items_mget($1::bigint[]))' --batch "$k"
		rb_case "resp-$k" "$k"
		benchrig_case "resp-$k" "$redis_pid" resp --addr "127.0.0.1:$redisport" --key "$key" --db db --keyspace "$ROWS" --batch "$k" -d "${DURATION}s"
	done
	echo "run $run done" >&2
done

python3 - "$work/rows" "$work/decode.txt" <<'PY'
import re, statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    case, tool, n, secs, ccpu, scpu = line.split()
    n, secs, ccpu, scpu = float(n), float(secs), float(ccpu), float(scpu)
    rows[(case, tool)].append((n / secs, ccpu * 1e6 / n, scpu * 1e6 / n))
def m(vals): return statistics.median(vals)
def fmt(vals, spec): return f"{m(vals):{spec}} [{min(vals):{spec}}–{max(vals):{spec}}]"
cases = ["one", "any-1", "any-64", "fn-1", "fn-64", "resp-1", "resp-64"]
peer = {"one": "pgbench", "any-1": "pgbench", "any-64": "pgbench", "fn-1": "pgbench", "fn-64": "pgbench", "resp-1": "redis-benchmark", "resp-64": "redis-benchmark"}
# A tool whose client used 90 % of its one core or more measured itself:
# its req/s ratios say how fast the client is, not the server.
def bound(c, tool):
    v = rows.get((c, tool))
    return bool(v) and m([x[0] * x[1] / 1e6 for x in v]) >= 0.9
print("| case | tool | req/s | client µs/op | client cores | server µs/op |")
print("|---|---|---|---|---|---|")
for c in cases:
    for tool in ("peer", "benchrig"):
        v = rows.get((c, tool))
        if not v:
            continue
        name = peer[c] if tool == "peer" else "benchrig"
        cores = m([x[0] * x[1] / 1e6 for x in v])
        flag = " (client-bound)" if bound(c, tool) else ""
        print(f"| {c} | {name} | {fmt([x[0] for x in v], ',.0f')} | {fmt([x[1] for x in v], '.1f')} | {cores:.2f}{flag} | {fmt([x[2] for x in v], '.1f')} |")
print()
print("The seeds' ratios of req/s (median), each tool against itself:")
print()
PAIRS = [("resp-1", "any-1"), ("fn-1", "any-1"), ("any-1", "one"), ("fn-64", "any-64"), ("resp-64", "any-64")]
def ratios(of, note_bound):
    """One table of the seeds' ratios: of(a's rows, b's rows) for each tool."""
    print("| ratio | peers | benchrig | benchrig ÷ peers |")
    print("|---|---|---|---|")
    for a, b in PAIRS:
        r = {}
        for tool in ("peer", "benchrig"):
            va, vb = rows.get((a, tool)), rows.get((b, tool))
            if va and vb:
                r[tool] = of(va, vb)
        if len(r) == 2:
            note = ""
            if note_bound and any(bound(x, t) for x in (a, b) for t in ("peer", "benchrig")):
                note = " (a client-bound case: not comparable)"
            print(f"| {a} ÷ {b} | {r['peer']:.2f} | {r['benchrig']:.2f} | {r['benchrig'] / r['peer']:.2f}{note} |")
ratios(lambda va, vb: m([x[0] for x in va]) / m([x[0] for x in vb]), True)
print()
print("The same ratios from the server's own cost (server µs/op of b ÷ of a: how much")
print("cheaper a is for the server), which a client-bound tool does not distort as much:")
print()
ratios(lambda va, vb: m([x[2] for x in vb]) / m([x[2] for x in va]), False)
print()
print("Client cost against the goal (benchrig's client µs/op ≤ the peer's plus decoding")
print("that case's rows; decoder ns/row from BenchmarkDecode on the client's CPU):")
print()
ns = {}
for line in open(sys.argv[2]):
    mt = re.match(r"BenchmarkDecode/(\S+?)(?:-\d+)?\s.*?([\d.]+) ns/row", line)
    if mt:
        ns[mt.group(1)] = float(mt.group(2))
shape = {"one": ("rows", 1), "any-1": ("rows", 1), "any-64": ("rows", 64), "fn-1": ("json-strings", 1), "fn-64": ("json-strings", 64)}
print("| case | peer client µs/op | benchrig client µs/op | decode µs/op | goal met |")
print("|---|---|---|---|---|")
for c in cases:
    vp, vb = rows.get((c, "peer")), rows.get((c, "benchrig"))
    if not vp or not vb:
        continue
    sh, k = shape.get(c, (None, 0))
    dec = ns.get(sh, 0) * k / 1000 if sh else 0.0
    p, b = m([x[1] for x in vp]), m([x[1] for x in vb])
    print(f"| {c} | {p:.1f} | {b:.1f} | {dec:.1f} | {'yes' if b <= p + dec else 'no'} |")
PY
