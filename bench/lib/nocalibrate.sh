# shellcheck shell=bash
# nocal BIN prints --no-calibrate, and --busy-poll off, when BIN knows them.
# benchrig measures its own floor (0.3 s per level against a null peer, a
# process of its own) before every run; the peer scripts compare the client
# CPU of the load, so they leave that fixed cost out, as `benchrig
# calibrate` reports it apart. A server pinned by taskset is found pinned,
# and beside it benchrig's default busy poll (auto) would poll 20 µs before
# each sleep: CPU spent for the server's sake that no peer spends, so the
# default rows turn it off (the busypoll rows below turn it on again). An
# older build (BENCHRIG_BEFORE, BENCHRIG) may know neither flag.
nocal() {
	local help
	help=$("$1" http --help 2>&1 || true)
	case "$help" in *--no-calibrate*) echo --no-calibrate ;; esac
	case "$help" in *--busy-poll*) echo --busy-poll off ;; esac
	true
}

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
# (benchrig-busypoll…), nothing for the others; it comes after nocal's
# --busy-poll off, and the last one given counts. The extra row shows what
# polling changes for the server's throughput and the client's CPU.
busypoll() { case "$1" in benchrig-busypoll*) echo --busy-poll "$BUSY_POLL" ;; esac; }

# slack TOOL prints --timer-slack $TIMER_SLACK for the benchrig-slack rows
# (TIMER_SLACK=1ms in the rate scripts), nothing for the others: the row
# shows the client CPU when sends may wait up to that long to leave
# together, as h2load's --rps and wrk2 send on millisecond timers.
slack() { case "$1" in benchrig-slack*) echo --timer-slack "$TIMER_SLACK" ;; esac; }

# nocoalesce TOOL prints --coalesce off for the benchrig-nocoalesce rows
# (COALESCE_OFF=1 in bench/h2-peers.sh), nothing for the others: the same
# build on io_uring, handling every answer as it comes.
nocoalesce() { case "$1" in benchrig-nocoalesce*) echo --coalesce off ;; esac; }
