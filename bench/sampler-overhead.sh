#!/usr/bin/env bash
# sampler-overhead.sh — how much CPU does benchrig's process-tree sampler
# (internal/sample) cost? Builds bench/sampleroverhead, which starts a tree of
# 100 processes (a shell and 99 sleeps), samples it at 1 s and at 100 ms for
# DURATION each, and prints the sampler's own CPU as a percentage of one core.
# Goal: under 1 % of one core at 1 s.
#
# usage: bench/sampler-overhead.sh [DURATION]     (default 20s; env DURATION too)
#        PROCS=200 INTERVALS=1s,500ms,100ms bench/sampler-overhead.sh 10s
#        PSS_INTERVAL=100ms bench/sampler-overhead.sh   (PSS at every sample; default every 5 s)
set -euo pipefail

duration=${1:-${DURATION:-20s}}
procs=${PROCS:-100}
intervals=${INTERVALS:-1s,100ms}
pss_interval=${PSS_INTERVAL:-0}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
pid=""

cleanup() {
	# The program ends its own tree; this catches the case where it was
	# killed before it could. The pgid file exists only while the tree does.
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [[ -s $tmp/pgid ]]; then
		kill -KILL -- "-$(cat "$tmp/pgid")" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
(cd "$repo" && go build -o "$tmp/sampleroverhead" ./bench/sampleroverhead)

pss_label=$pss_interval
[[ $pss_label == 0 ]] && pss_label="the default"
echo "sampler overhead: $procs processes, $duration per interval, PSS interval $pss_label, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/sampleroverhead" -duration "$duration" -procs "$procs" -intervals "$intervals" -pss-interval "$pss_interval" -pgid-file "$tmp/pgid" &
pid=$!
wait "$pid"
