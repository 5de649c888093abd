#!/usr/bin/env bash
# ui-overhead.sh — what does the live page (--ui) cost the load? Runs
# benchrig http against examples/servers/hello (server on CPU 0, benchrig
# on CPU 1) closed loop, without --ui, with --ui and no page open, and with
# PAGES pages open (each a client reading the page's event stream through
# the whole run), REPEATS times each, interleaved, and prints benchrig's own CPU per request
# (load.client, µs) and requests/s, median [min–max], and the ratio of the
# medians.
#
# usage: bench/ui-overhead.sh [DURATION]   (default 5s; REPEATS=5, PAGES=5, CONNS=10)
set -euo pipefail
duration=${1:-5s}
repeats=${REPEATS:-5}
pages=${PAGES:-5}
conns=${CONNS:-10}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
(cd "$repo" && go build -o "$tmp/benchrig" ./cmd/benchrig && go build -o "$tmp/hello" ./examples/servers/hello)
taskset -c 0 "$tmp/hello" -addr 127.0.0.1:0 >"$tmp/hello.out" &
pids+=($!)
for _ in $(seq 50); do grep -q listening "$tmp/hello.out" 2>/dev/null && break; sleep 0.1; done
url="http://$(awk '/listening on/ { print $3; exit }' "$tmp/hello.out")/"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$repeats"); do
	for v in off 0 "$pages"; do
		ui=(--ui --ui-linger 1ms)
		[ "$v" = off ] && ui=()
		"$tmp/benchrig" http "$url" -c "$conns" -d "$duration" --client-cpus 1 --no-calibrate "${ui[@]}" -o "$tmp/p$v-$r.json" 2>"$tmp/p$v-$r.err" >/dev/null &
		run=$!
		page=""
		for _ in $(seq 100); do [ "$v" = off ] && break; page=$(grep -o 'http://127.0.0.1:[0-9]*/' "$tmp/p$v-$r.err" 2>/dev/null | head -1 || true); [ -n "$page" ] && break; sleep 0.05; done
		readers=()
		n=$v
		[ "$v" = off ] && n=0
		for _ in $(seq 1 "$n"); do
			curl -sN "${page}events" >/dev/null 2>&1 &
			readers+=($!)
		done
		wait "$run" || true
		for p in "${readers[@]}"; do kill "$p" 2>/dev/null || true; done
	done
done
python3 - "$tmp" "$repeats" "$pages" <<'PY'
import json, sys, statistics as st
tmp, n, pages = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def sample(path):
    for line in open(path):
        d = json.loads(line)
        if d.get("type") == "sample":
            return d
res = {}
for v in ["off", "0", pages]:
    us, rps = [], []
    for r in range(1, n + 1):
        s = sample(f"{tmp}/p{v}-{r}.json")
        l = s["load"]
        us.append(l["client"]["cpu_per_request_us"])
        rps.append(l["requests"] / l["seconds"])
    res[v] = (us, rps)
    name = "no --ui" if v == "off" else f"--ui, {v} pages"
    print(f"{name}: client µs/request {st.median(us):.2f} [{min(us):.2f}–{max(us):.2f}], requests/s {st.median(rps):,.0f} [{min(rps):,.0f}–{max(rps):,.0f}]")
off, a, b = st.median(res["off"][0]), st.median(res["0"][0]), st.median(res[pages][0])
print(f"ratios of the medians, client µs/request: --ui with 0 pages ÷ no --ui {a / off:.3f}; {pages} pages ÷ no --ui {b / off:.3f}")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
