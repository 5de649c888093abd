#!/usr/bin/env bash
# sampler-overhead.sh — how much CPU does benchrig's process-tree sampler
# (internal/sample) cost? Builds bench/sampleroverhead, which starts a tree of
# 100 processes (a shell and 99 sleeps), samples it at 1 s and at 100 ms for
# DURATION each, and prints the sampler's own CPU as a percentage of one core.
# Goal: under 0.5 % of one core at 1 s.
#
# usage: bench/sampler-overhead.sh [DURATION]     (default 20s; env DURATION too)
#        PROCS=200 INTERVALS=1s,500ms,100ms bench/sampler-overhead.sh 10s
#        PSS_INTERVAL=100ms bench/sampler-overhead.sh   (PSS at every sample; default every 5 s)
#        STRACE=1 INTERVALS=1s bench/sampler-overhead.sh 20s
#            (strace -c -f attached once the tree is full: the system calls of
#            the measurement only, and their count per sample; strace slows the
#            sampler, so its CPU figures are not the untraced ones)
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
args=(-duration "$duration" -procs "$procs" -intervals "$intervals" -pss-interval "$pss_interval" -pgid-file "$tmp/pgid")
if [[ ${STRACE:-} != 1 ]]; then
	"$tmp/sampleroverhead" "${args[@]}" &
	pid=$!
	wait "$pid"
	exit
fi

command -v strace >/dev/null || { echo "STRACE=1 needs strace (apt-get install strace)" >&2; exit 1; }
"$tmp/sampleroverhead" "${args[@]}" -hold-file "$tmp/ready" >"$tmp/out" &
pid=$!
until [[ -e $tmp/ready ]]; do
	kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit; }
	sleep 0.1
done
strace -c -f -o "$tmp/strace" -p "$pid" 2>/dev/null &
spid=$!
# Wait until every thread is traced, then let the measurement start.
while grep -qs '^TracerPid:[[:space:]]*0$' /proc/"$pid"/task/*/status; do sleep 0.1; done
kill -USR1 "$pid"
wait "$pid"
wait "$spid" || true
cat "$tmp/out"
samples=$(awk 'NR > 1 { n += $2 } END { print n }' "$tmp/out")
total=$(awk '$NF == "total" { print $4 }' "$tmp/strace")
echo
cat "$tmp/strace"
echo
echo "system calls: $total in $samples samples: $(awk -v t="$total" -v n="$samples" 'BEGIN { printf "%.1f", t / n }') per sample"
