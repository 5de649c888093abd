# shellcheck shell=bash
# CLIENT_QUOTA=F runs every client of a peer script in a control group of
# its own limited to F of one CPU (0.05–1; a CFS quota of F × 100 ms per
# 100 ms): each tool then has the same CPU and is the bottleneck, not the
# server, and its request rate is its throughput per client core. A tool
# that spends less on each request only because it waits while the server
# works cannot gain here: at saturation nothing waits. Needs root and the
# cpu controller (cgroup v2 with cpu enabled, or v1's cpu hierarchy).
#
#   quota_init WORKDIR   # makes the group when CLIENT_QUOTA is set
#   quota_prefix         # prints what to put before a client's command
#   quota_stop           # removes the group (in the script's cleanup)
CLIENT_QUOTA=${CLIENT_QUOTA:-}
quota_group=

quota_init() {
	[ -n "$CLIENT_QUOTA" ] || return 0
	local us
	us=$(python3 -c 'import sys
f = float(sys.argv[1])
if not 0.05 <= f <= 1:
    sys.exit("CLIENT_QUOTA=%s: want a fraction of one CPU, 0.05-1" % sys.argv[1])
print(int(f * 100000))' "$CLIENT_QUOTA") || exit 2
	if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		quota_group=/sys/fs/cgroup/benchrig-bench-$$
		mkdir "$quota_group" && echo "$us 100000" >"$quota_group/cpu.max"
	elif [ -w /sys/fs/cgroup/cpu ]; then
		quota_group=/sys/fs/cgroup/cpu/benchrig-bench-$$
		mkdir "$quota_group" && echo 100000 >"$quota_group/cpu.cfs_period_us" && echo "$us" >"$quota_group/cpu.cfs_quota_us"
	else
		echo "CLIENT_QUOTA: no writable cpu controller (cgroup v2 with cpu enabled, or v1 /sys/fs/cgroup/cpu); run as root" >&2
		exit 2
	fi || { echo "CLIENT_QUOTA: cannot make $quota_group" >&2; exit 2; }
	echo "clients limited to $CLIENT_QUOTA of a CPU each run (control group $quota_group)" >&2
}

quota_prefix() { [ -z "$quota_group" ] || echo "bench/lib/inquota.sh $quota_group"; }

quota_stop() {
	[ -n "$quota_group" ] && [ -d "$quota_group" ] || return 0
	rmdir "$quota_group" 2>/dev/null || echo "CLIENT_QUOTA: $quota_group not removed (a process is left in it)" >&2
}
