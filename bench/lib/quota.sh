# shellcheck shell=bash
# CLIENT_QUOTA=F runs every client of a peer script in a control group of
# its own limited to F of one CPU (0.1–1; a CFS quota of F × the period per
# period): each tool then has the same CPU and is the bottleneck, not the
# server, and its request rate is its throughput per client core. A tool
# that spends less on each request only because it waits while the server
# works cannot gain here. CLIENT_QUOTA_PERIOD_MS (10 by default; 1–1000) is
# the period: a container's CPU limit uses 100 ms, in which a client runs
# in bursts (30 ms on, 70 ms off at 0.3), catches up with what came while
# it was off early in each burst and then runs unsaturated; 10 ms keeps it
# closer to a steady share. Needs root and the cpu controller (cgroup v2
# with cpu enabled, or v1's cpu hierarchy).
#
#   quota_init WORKDIR   # makes the group when CLIENT_QUOTA is set
#   quota_prefix         # prints what to put before a client's command
#   quota_stop           # removes the group (in the script's cleanup)
CLIENT_QUOTA=${CLIENT_QUOTA:-}
CLIENT_QUOTA_PERIOD_MS=${CLIENT_QUOTA_PERIOD_MS:-10}
quota_group=

quota_init() {
	[ -n "$CLIENT_QUOTA" ] || return 0
	local us period
	period=$(python3 -c 'import sys
p = float(sys.argv[1])
if not 1 <= p <= 1000:
    sys.exit("CLIENT_QUOTA_PERIOD_MS=%s: want 1-1000 (ms)" % sys.argv[1])
print(int(p * 1000))' "$CLIENT_QUOTA_PERIOD_MS") || exit 2
	us=$(python3 -c 'import sys
f, period = float(sys.argv[1]), int(sys.argv[2])
if not 0.1 <= f <= 1:
    sys.exit("CLIENT_QUOTA=%s: want a fraction of one CPU, 0.1-1" % sys.argv[1])
if f * period < 1000:
    sys.exit("CLIENT_QUOTA=%s of a %d ms period is under the kernel minimum quota of 1 ms: raise CLIENT_QUOTA_PERIOD_MS" % (sys.argv[1], period // 1000))
print(int(f * period))' "$CLIENT_QUOTA" "$period") || exit 2
	if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		quota_group=/sys/fs/cgroup/benchrig-bench-$$
		mkdir "$quota_group" && echo "$us $period" >"$quota_group/cpu.max"
	elif [ -w /sys/fs/cgroup/cpu ]; then
		quota_group=/sys/fs/cgroup/cpu/benchrig-bench-$$
		mkdir "$quota_group" && echo "$period" >"$quota_group/cpu.cfs_period_us" && echo "$us" >"$quota_group/cpu.cfs_quota_us"
	else
		echo "CLIENT_QUOTA: no writable cpu controller (cgroup v2 with cpu enabled, or v1 /sys/fs/cgroup/cpu); run as root" >&2
		exit 2
	fi || { echo "CLIENT_QUOTA: cannot make $quota_group" >&2; exit 2; }
	echo "clients limited to $CLIENT_QUOTA of a CPU ($us µs per $period µs; control group $quota_group)" >&2
}

quota_prefix() { [ -z "$quota_group" ] || echo "bench/lib/inquota.sh $quota_group"; }

quota_stop() {
	[ -n "$quota_group" ] && [ -d "$quota_group" ] || return 0
	rmdir "$quota_group" 2>/dev/null || echo "CLIENT_QUOTA: $quota_group not removed (a process is left in it)" >&2
}
