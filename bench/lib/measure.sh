# shellcheck shell=bash
# The peers scripts' measurement, after bench/lib/quota.sh:
#  - measure CMD…: CMD on CLIENT_CPU (under CLIENT_QUOTA when set), its
#    output in $work/out; prints bench/lib/measure.py's JSON (the client's
#    CPU, and the server's when SERVER_PID is exported);
#  - cpu_of: from that JSON on stdin, the client's CPU seconds, then the
#    server's when there is a figure: the fourth and fifth fields of a row
#    of bench/lib/summary.py;
#  - window_cpu: the requests, seconds and client CPU seconds benchrig
#    itself reports for the load window in $work/out (without its start-up,
#    connections and phase edges): what a per-request floor compares with.
# shellcheck disable=SC2046 # quota_prefix prints nothing or two words
measure() { python3 bench/lib/measure.py "$work/out" -- $(quota_prefix) taskset -c "$CLIENT_CPU" "$@"; }
cpu_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["user"]+d["sys"], *([d["server"]] if "server" in d else []))'; }
window_cpu() {
	python3 bench/lib/sample.py "$work/out" load.requests load.seconds load.client.user_seconds load.client.system_seconds |
		awk '{print $1, $2, $3 + $4}'
}
