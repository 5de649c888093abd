#!/usr/bin/env bash
# `make test`: prepare what the tests need, then vet and run every test.
#  - Debian packages the tests need (scripts/deps.sh): installed when run as
#    root, else the run stops in its first seconds naming `make deps`;
#  - the seeds' npm packages: `npm ci` where missing or stale;
#  - every test runs with BENCHRIG_TEST_STRICT=1: a missing part fails;
#  - SKIP=kind,... skips the tests of those kinds by name (refused when
#    CI=true); the last lines list every skipped test and why.
# Kinds: browser seeds redis postgres nginx node netns tools.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
kinds="browser seeds redis postgres nginx node netns tools"

skip="${SKIP:-}"
skip="${skip// /}"
if [ -n "$skip" ]; then
	if [ "${CI:-}" = "true" ]; then
		echo "make test: SKIP=$skip is refused under CI=true: CI runs every test" >&2
		exit 2
	fi
	for k in ${skip//,/ }; do
		case " $kinds " in
		*" $k "*) ;;
		*) echo "make test: SKIP=$skip: unknown kind \"$k\"; kinds: ${kinds// /, }" >&2; exit 2 ;;
		esac
	done
fi
skipped() { case ",$skip," in *",$1,"*) return 0 ;; esac; return 1; }

# Debian packages.
missing() {
	need=()
	while read -r kind pkg; do
		[ -n "$kind" ] || continue
		skipped "$kind" || need+=("$pkg ($kind)")
	done < <(scripts/deps.sh --missing)
}
missing
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
	echo "make test: installing ${need[*]} (make deps)"
	scripts/deps.sh
	missing
fi
if [ ${#need[@]} -gt 0 ]; then
	echo "make test: missing ${need[*]}." >&2
	if [ "$(id -u)" = 0 ]; then
		echo "  make deps installed the packages, yet these are still not found (PATH=$PATH; BENCHRIG_CHROMIUM=${BENCHRIG_CHROMIUM:-unset})" >&2
	else
		echo "  Install them as root with: sudo make deps" >&2
	fi
	echo "  or skip those tests by name: SKIP=<kind>,... make test (kinds: ${kinds// /, })" >&2
	exit 1
fi

# The seeds' npm packages.
if ! skipped seeds; then
	scripts/seeds-npm.sh
fi

export BENCHRIG_TEST_STRICT=1 BENCHRIG_TEST_SKIP="$skip"
start=$(date +%s)
echo "make test: go vet"
$GO vet ./...
$GO build -o bin/testsum ./scripts/testsum
echo "make test: go test (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
set +e
# -vet=off: go vet ./... above ran every analyzer go test would (and
# more); go test's own pass over every package again cost 74 s of a cold
# build cache here.
# -p 4: four packages at once on two cores. Most tests wait (servers
# starting, phases, drains) more than they work: the tests took 396 s at
# the default -p 2 and 308 s at -p 4 on this 2-core VM (2026-12-06), the
# cores busy 1.8 of 2 either way.
# TMPDIR of their own: a test (or a benchrig, a server, a browser it
# starts) that leaves a file or directory behind fails the run, named.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-test-XXXXXX")
chmod 1777 "$tmp" # as /tmp: servers run as other users (postgres) make their dirs there
trap 'rm -rf "$tmp"' EXIT
TMPDIR="$tmp" $GO test -vet=off -count=1 -p 4 -parallel 4 -timeout 25m -json ./... 2>&1 | ./bin/testsum
ps=("${PIPESTATUS[@]}")
status=${ps[1]}
[ "${ps[0]}" = 0 ] || [ "$status" != 0 ] || status=1
set -e
left=$(find "$tmp" -mindepth 1 -maxdepth 1 -printf '  %f\n' | sort | head -20)
if [ -n "$left" ]; then
	echo "make test: the tests left these in their TMPDIR (each must remove what it makes):"
	echo "$left"
	status=1
fi
echo "make test: $(( $(date +%s) - start )) s of vet and tests; SKIP=${skip:-none}"
exit "$status"
