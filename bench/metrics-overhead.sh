#!/usr/bin/env bash
# metrics-overhead.sh — what does scraping a target's /metrics cost the
# target? Runs examples/servers/node-http at a fixed rate with no metrics,
# with metrics every 1 s and every 100 ms, REPEATS times each in turn, and
# prints each variant's server µs/request, p99 and the scrapes' client wall
# time, median [min–max], and the ratios to the run without metrics.
#
# usage: bench/metrics-overhead.sh [RATE] [DURATION]   (default 1000 req/s, 10s; REPEATS=3)
set -euo pipefail

rate=${1:-1000}
duration=${2:-10s}
repeats=${REPEATS:-3}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v node >/dev/null || { echo "node not installed" >&2; exit 1; }
(cd "$repo" && go build -o "$tmp/benchrig" ./cmd/benchrig)
cd "$repo"

series=nodejs_heap_size_used_bytes,nodejs_heap_size_total_bytes,nodejs_external_memory_bytes,process_resident_memory_bytes
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$repeats"); do
	for v in none 1s 100ms; do
		port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
		args=(http "http://127.0.0.1:$port/" --target "node examples/servers/node-http/server.js" -R "$rate" -d "$duration"
			--baseline 1s --warmup 3s --settle 1s --recovery 1s --no-calibrate -o "$tmp/$v-$r.json")
		if [[ $v != none ]]; then
			args+=(--metrics-url "http://127.0.0.1:$port/metrics" --metrics-series "$series" --metrics-every "$v")
		fi
		"$tmp/benchrig" "${args[@]}" >/dev/null 2>&1 || true
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp" "$repeats" <<'PY'
import json, sys, statistics as st
tmp, n = sys.argv[1], int(sys.argv[2])
def sample(path):
    for line in open(path):
        d = json.loads(line)
        if d.get("type") == "sample":
            return d
rows = {}
for v in ["none", "1s", "100ms"]:
    us, p99, wall, scrapes = [], [], [], []
    for r in range(1, n + 1):
        s = sample(f"{tmp}/{v}-{r}.json")
        us.append(s["server"]["figures"]["us_per_request"])
        p99.append(next(p["us"] for p in s["load"]["latency"]["percentiles"] if p["q"] == 99) / 1000)
        m = s.get("metrics")
        if m:
            wall.append(m["cost"]["wall_s"] * 1000); scrapes.append(m["cost"]["scrapes"])
    rows[v] = (us, p99, wall, scrapes)
fmt = lambda xs, d=1: f"{st.median(xs):.{d}f} [{min(xs):.{d}f}–{max(xs):.{d}f}]" if xs else "–"
base = st.median(rows["none"][0])
print(f"{'metrics':8} {'server µs/request':24} {'ratio':6} {'p99 ms':22} {'scrapes':8} {'scrape wall ms (all)':22}")
for v, (us, p99, wall, scrapes) in rows.items():
    print(f"{v:8} {fmt(us):24} {st.median(us)/base:<6.3f} {fmt(p99, 2):22} {fmt(scrapes, 0):8} {fmt(wall):22}")
PY
