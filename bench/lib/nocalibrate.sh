# shellcheck shell=bash
# nocal BIN prints --no-calibrate when BIN knows it. benchrig measures its
# own floor (0.3 s per level against a null peer, a process of its own) before
# every run; the peer scripts compare the client CPU of the load, so they
# leave that fixed cost out, as `benchrig calibrate` reports it apart. An
# older build (BENCHRIG_BEFORE, BENCHRIG) has no floor and no flag.
nocal() { "$1" http --help 2>&1 | grep -q -- '--no-calibrate' && echo --no-calibrate; true; }

# PINNED=0 is the unpinned case: the server and every client may use every
# CPU (taskset over all of them) and benchrig picks its own GOMAXPROCS and
# event loops, as a run without pinning flags does. brprocs prints the
# GOMAXPROCS benchrig is given: 1 pinned (its one CPU), nothing unpinned.
PINNED=${PINNED:-1}
if [ "$PINNED" = 0 ]; then
	all_cpus="0-$(($(nproc) - 1))"
	SERVER_CPU=$all_cpus
	CLIENT_CPU=$all_cpus
fi
brprocs() { [ "$PINNED" = 0 ] || echo 1; }

# busypoll TOOL prints --busy-poll $BUSY_POLL for the busy-polling rows
# (benchrig-busypoll…), nothing for the others. The scripts give benchrig
# a URL and pin it with taskset: it cannot tell that its CPU is its own,
# so its default (auto) sleeps at once; the extra row shows what polling
# changes for the server's throughput and the client's CPU.
busypoll() { case "$1" in benchrig-busypoll*) echo --busy-poll "$BUSY_POLL" ;; esac; }
