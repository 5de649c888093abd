#!/usr/bin/env bash
# scripts/fuzz-one.sh PKG NAME FUZZTIME: one fuzz target for FUZZTIME, as
# `make fuzz-short` runs each. A failure with a failing input (written to
# testdata/fuzz/NAME, or a panic or t.Fatal line) fails at once. A run that
# fails with nothing but "context deadline exceeded" at the end of its
# -fuzztime is Go 1.26's fuzz coordinator racing its own deadline
# (golang/go#75804, fixed in Go 1.27), not the target: it runs again once,
# and if that run ends the same way it is reported and passes.
set -uo pipefail
pkg=$1 name=$2 fuzztime=$3
GO=${GO:-go}
run() {
	GOMEMLIMIT=512MiB "$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}
# bare_deadline: the log's only failure is the coordinator's deadline.
bare_deadline() {
	grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'Failing input written|^panic:|_test\.go:[0-9]+:|fuzz: minimizing' "$log"
}
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
for attempt in 1 2; do
	if run; then
		exit 0
	fi
	if ! bare_deadline; then
		exit 1
	fi
	echo "fuzz-one: $name ended with Go's fuzz-deadline race (golang/go#75804, no failing input); attempt $attempt of 2"
done
echo "fuzz-one: $name: the deadline race twice, no failing input either time: passed with this warning"
exit 0
