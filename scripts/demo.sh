#!/usr/bin/env bash
# The built-in demo: start the example Go server on a free loopback port,
# run benchrig's quick mode against it (closed loop, then a constant rate),
# and stop the server. Run through `make demo`, which builds bin/ first.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp -t benchrig-demo.XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -f "$log"
}
trap cleanup EXIT INT TERM

./bin/hello -addr 127.0.0.1:0 >"$log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 1 100); do
	addr=$(sed -n 's/^listening on //p' "$log" | head -n1)
	[ -n "$addr" ] && break
	sleep 0.05
done
[ -n "$addr" ] || { echo "demo: example server did not start:" >&2; cat "$log" >&2; exit 1; }

echo "== Closed loop: 10 connections for 5 s against the example Go server (pid $server_pid) =="
./bin/benchrig http "http://$addr/" -c 10 -d 5s --warmup 1s
echo
echo "== Constant rate: 1,000 req/s over 32 connections for 5 s =="
./bin/benchrig http "http://$addr/" -R 1000 -d 5s
