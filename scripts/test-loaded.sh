#!/usr/bin/env bash
# `make test-loaded`: the whole `make test` with two busy threads per CPU
# beside it (scripts/cpuhog), as on a shared CI machine. The hogs stop
# with the run, on Ctrl-C, or after 40 minutes at most.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
$GO build -o bin/cpuhog ./scripts/cpuhog
./bin/cpuhog -per-core 2 -for 40m &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true' EXIT
sleep 5 # let the load average see the hogs
echo "make test-loaded: load average with the hogs: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
set +e
scripts/test.sh
status=$?
set -e
echo "make test-loaded: $(( $(date +%s) - start )) s under load (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)); exit $status"
exit "$status"
