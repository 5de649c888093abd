#!/bin/sh
# inquota.sh GROUP CMD ARGS...: moves this process into the control group
# directory GROUP (bench/lib/quota.sh made it), then runs CMD in its place,
# so CMD and its children spend the group's CPU quota.
g=$1
shift
echo $$ >"$g/cgroup.procs" || exit 125
exec "$@"
