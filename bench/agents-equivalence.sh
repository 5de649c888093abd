#!/usr/bin/env bash
# One benchrig against `--agents 3 --local` (three agent processes, each a
# share of every cell) at the same total rate and connections, against the
# same pinned server: server on CPU 0, the client side (benchrig, or the
# coordinator and its agents) on CPU 1; REPEATS samples each. Then `benchrig
# compare` of the two files on req/s, p50 and p99, and the merged per-second
# rate against the target. A statistical claim on a noisy machine, so a
# script, not a test.
#
#   bench/agents-equivalence.sh                     # 3000 req/s, 12 connections, 5 repeats
#   RATE=10000 CONNECTIONS=30 REPEATS=5 bench/agents-equivalence.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-3000}
CONNECTIONS=${CONNECTIONS:-12}
REPEATS=${REPEATS:-5}
LOAD=${LOAD:-10s}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

work=$(mktemp -d -t benchrig-agents-eq.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
make -s build >/dev/null

cat >"$work/suite.yaml" <<YAML
name: agents-equivalence
seed: 7
repeats: $REPEATS
sampler: {interval: 500ms}
placement: {target_cpus: "$SERVER_CPU"}
phases: {baseline: 500ms, warmup: 2s, settle: 500ms, load: $LOAD, recovery: 500ms}
thresholds: {coverage: 95, p99: 250ms}
targets:
  hello:
    command: ["$PWD/bin/hello", "-addr", "127.0.0.1:{port}"]
    env: {GOMAXPROCS: "1"}
    ready: {http: "http://127.0.0.1:{port}/"}
paths:
  root: {http: {url: "http://127.0.0.1:{port}/", expect_status: 200}}
matrix: {targets: [hello], paths: [root], connections: [$CONNECTIONS], rates: [$RATE]}
YAML
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
taskset -c "$CLIENT_CPU" ./bin/benchrig run "$work/suite.yaml" -o "$work/one.json" >/dev/null 2>"$work/one.log"
echo "one benchrig: done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
taskset -c "$CLIENT_CPU" ./bin/benchrig run "$work/suite.yaml" -o "$work/agents.json" --agents 3 --local --listen 127.0.0.1:0 >/dev/null 2>"$work/agents.log"
echo "--agents 3 --local: done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
./bin/benchrig verify "$work/one.json" >&2
./bin/benchrig verify "$work/agents.json" >&2

echo "## A = one benchrig, B = --agents 3 --local ($RATE req/s, $CONNECTIONS connections, $REPEATS repeats of $LOAD)"
./bin/benchrig compare "$work/one.json" "$work/agents.json" --format md
python3 - "$work/one.json" "$work/agents.json" "$RATE" <<'PY'
import json, statistics, sys
rate = float(sys.argv[3])
for name, path in (("one benchrig", sys.argv[1]), ("--agents 3", sys.argv[2])):
    rows = [json.loads(l) for l in open(path)][1:]
    per_sec, parts = [], []
    for s in rows:
        if "load" not in s:
            continue
        tl = s["load"]["timeline"]
        # whole seconds inside the window (the first and last are partial)
        per_sec += [t["requests"] for t in tl[1:-1]]
        parts.append(len(s.get("agents", [])))
    med = statistics.median(per_sec)
    print(f"{name}: per-second requests median {med:.0f} [{min(per_sec)}–{max(per_sec)}] = {med / rate * 100:.1f} % of the target {rate:.0f}; parts per sample {sorted(set(parts))}")
PY
