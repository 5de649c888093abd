#!/usr/bin/env bash
# Every peer case in one run, pinned and then unpinned, into one file under
# bench/results/ with the date, the commit, the machine's CPU model and the
# load average at the start, ending in one table: each case's benchrig
# figure against its peer, pinned (server on CPU 0, clients on CPU 1) and
# unpinned (PINNED=0: every process on every CPU, benchrig's own GOMAXPROCS
# and event loops). Before each script it waits for the machine to be quiet
# (settle, below; SETTLE_MAX=60 seconds at most).
#
#   bench/all-peers.sh                 # RUNS=5 of each case, 5 s each
#   RUNS=3 PINNING="1" bench/all-peers.sh    # pinned only
#   BENCHRIG_BEFORE=/tmp/old-benchrig bench/all-peers.sh   # an older build interleaved as benchrig-before
#   SCRIPTS="http pg" bench/all-peers.sh
#   URING=1 bench/all-peers.sh    # http and resp add the floor on io_uring (floor-uring)
#   BUSY_POLL=20us bench/all-peers.sh  # http and h2 also run benchrig --busy-poll 20us (benchrig-busypoll)
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
	echo "# bench/all-peers.sh on $commit, $(date -u '+%F %H:%M') UTC; RUNS=$RUNS; SCRIPTS=\"$SCRIPTS\"; PINNING=\"$PINNING\"; ${BENCHRIG_BEFORE:+BENCHRIG_BEFORE interleaved as benchrig-before; }${BUSY_POLL:+BUSY_POLL=$BUSY_POLL: http and h2 add a benchrig-busypoll row; }${URING:+URING=$URING; }${EPOLL:+EPOLL=$EPOLL; }$(nproc) CPUs: $cpu"
	echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out"
# settle: before each script, wait (at most SETTLE_MAX seconds) until the
# machine has been quiet for 5 s in a row: under 10 % of its CPU time busy
# in each second (/proc/stat), so that the last script's server processes
# (pg's 64 backends) are gone. The load average decays over minutes and is
# only recorded, with the seconds waited.
SETTLE_MAX=${SETTLE_MAX:-60}
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat; }
settle() {
	local quiet=0 waited=0 b0 i0 b1 i1
	read -r b0 i0 < <(cpu_ticks)
	while [ "$quiet" -lt 5 ] && [ "$waited" -lt "$SETTLE_MAX" ]; do
		sleep 1
		waited=$((waited + 1))
		read -r b1 i1 < <(cpu_ticks)
		if [ $(((b1 - b0) * 10)) -lt $((b1 - b0 + i1 - i0)) ]; then quiet=$((quiet + 1)); else quiet=0; fi
		b0=$b1 i0=$i1
	done
	echo "$waited"
}
for pinned in $PINNING; do
	for s in $SCRIPTS; do
		label=pinned
		[ "$pinned" = 0 ] && label=unpinned
		waited=$(settle)
		{
			echo
			echo "## bench/$s-peers.sh, $label (load average $(cut -d' ' -f1 /proc/loadavg); after ${waited} s of settling)"
		} >>"$out"
		PINNED=$pinned bash "bench/$s-peers.sh" >>"$out" 2>&1 || echo "bench/$s-peers.sh failed: exit $?" >>"$out"
	done
done
python3 bench/lib/allpeers.py "$out" >>"$out"
echo "wrote $out" >&2
tail -n 40 "$out"
