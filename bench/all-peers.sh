#!/usr/bin/env bash
# Every peer case in one run, pinned and then unpinned, into one file under
# bench/results/ with the date, the commit, the machine's CPU model and the
# load average at the start, ending in one table: each case's benchrig
# figure against its peer, pinned (server on CPU 0, clients on CPU 1) and
# unpinned (PINNED=0: every process on every CPU, benchrig's own GOMAXPROCS
# and event loops).
#
#   bench/all-peers.sh                 # RUNS=5 of each case, 5 s each
#   RUNS=3 PINNING="1" bench/all-peers.sh    # pinned only
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/all-peers.sh   # an older build interleaved as benchrig-before
#   SCRIPTS="http pg" bench/all-peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export RUNS=${RUNS:-5}
PINNING=${PINNING:-"1 0"}
SCRIPTS=${SCRIPTS:-"http h2 pg resp ratecpu"}
make -s build >/dev/null
commit=$(git rev-parse --short HEAD)
out=${OUT:-bench/results/all-peers-$(date -u +%F)-$commit.txt}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
	echo "# bench/all-peers.sh on $commit, $(date -u '+%F %H:%M') UTC; RUNS=$RUNS; ${BENCHRIG_BEFORE:+BENCHRIG_BEFORE interleaved as benchrig-before; }$(nproc) CPUs: $cpu"
	echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out"
for pinned in $PINNING; do
	for s in $SCRIPTS; do
		label=pinned
		[ "$pinned" = 0 ] && label=unpinned
		{
			echo
			echo "## bench/$s-peers.sh, $label (load average $(cut -d' ' -f1 /proc/loadavg))"
		} >>"$out"
		PINNED=$pinned bash "bench/$s-peers.sh" >>"$out" 2>&1 || echo "bench/$s-peers.sh failed: exit $?" >>"$out"
	done
done
python3 bench/lib/allpeers.py "$out" >>"$out"
echo "wrote $out" >&2
tail -n 40 "$out"
