#!/usr/bin/env bash
# The built-in demo (`make demo`, which builds bin/ first):
#  1. quick mode, closed loop, against the example Go server started here;
#  2. quick mode at a constant rate with a managed target: benchrig starts
#     the server itself, samples its CPU and memory through every phase and
#     stops it;
#  3. a suite: two servers (Go, and Node.js when installed) × two
#     connection counts × two repeats, written to a results file as it goes,
#     then verified and reported: on the terminal, and as Markdown and a
#     self-contained HTML page in demo-out/ (kept after the demo).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d -t benchrig-demo.XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

./bin/hello -addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 1 100); do
	addr=$(sed -n 's/^listening on //p' "$work/server.log" | head -n1)
	[ -n "$addr" ] && break
	sleep 0.05
done
[ -n "$addr" ] || { echo "demo: example server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

echo "== 1. Closed loop: 10 connections for 5 s against the example Go server (pid $server_pid) =="
./bin/benchrig http "http://$addr/" -c 10 -d 5s --warmup 1s
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=

# a free port: one nothing answers on (bash's /dev/tcp; no python needed)
port=
for _ in $(seq 1 50); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "demo: no free port found" >&2; exit 1; }
echo
echo "== 2. Constant rate with a managed target: 1,000 req/s for 5 s; benchrig starts, samples and stops the server =="
./bin/benchrig http "http://127.0.0.1:$port/" --target "./bin/hello -addr 127.0.0.1:$port" \
	-R 1000 -d 5s --baseline 1s --warmup 2s --settle 1s --recovery 2s --sample-interval 250ms

echo
suite=examples/suites/http-demo.yaml
if ! command -v node >/dev/null; then
	echo "(node is not installed: the suite runs the Go server only)"
	sed 's/targets: \[go-hello, node-http\]/targets: [go-hello]/' "$suite" >"$work/suite.yaml"
	suite="$work/suite.yaml"
fi
echo "== 3. A suite: $(./bin/benchrig plan "$suite" | head -n1) =="
out=demo-out
mkdir -p "$out"
./bin/benchrig run "$suite" -o "$out/results.json" --force
echo
./bin/benchrig verify "$out/results.json"
./bin/benchrig report "$out/results.json" -o "$out/report.md"
./bin/benchrig report "$out/results.json" -o "$out/report.html"
