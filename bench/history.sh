#!/usr/bin/env bash
# The history's costs: import RUNS synthetic results files of 20 samples
# each (bench/historygen: verified files, no server) into a fresh SQLite
# history, then print the import time, the database's size and the time of
# `history show` for one cell; then what the SQLite driver costs, by
# building benchrig at BASE (before the history) and now, each from an
# empty build cache: the build time (wall and CPU) and the binary size of
# both. Times on a shared machine are noisy: run it twice before believing
# a difference.
#
#   bench/history.sh                 # 1000 files, base 079d9ba
#   RUNS=200 BUILD=0 bench/history.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1000}
BASE=${BASE:-079d9ba}
BUILD=${BUILD:-1}
export CGO_ENABLED=0

work=$(mktemp -d -t benchrig-history.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f s", b - a }'; }

go build -o "$work/benchrig" ./cmd/benchrig
go run ./bench/historygen -o "$work/files" -runs "$RUNS"
db="$work/history.db"
t=$(now)
find "$work/files" -name '*.json' -print0 | sort -z | xargs -0 "$work/benchrig" history --db "$db" add >"$work/add.log"
echo "import of $RUNS files ($(du -sh "$work/files" | cut -f1) of results): $(since "$t"), $(grep -c '^imported ' "$work/add.log") runs imported"
echo "database: $(du -b "$db"* | awk '{ n += $1 } END { printf "%.1f MiB", n / 1048576 }') ($(ls "$db"* | xargs -n1 basename | tr '\n' ' '))"
t=$(now)
"$work/benchrig" history --db "$db" show --cell api/hello/c=4/b=1 --figure p99 >"$work/show.txt"
echo "history show of one cell (p99, $(($(wc -l <"$work/show.txt") - 1)) runs): $(since "$t")"
t=$(now)
"$work/benchrig" history --db "$db" add "$work/files/run-0001.json" >/dev/null
echo "a second add of one file (already imported): $(since "$t")"

[ "$BUILD" = 1 ] || exit 0
mkdir "$work/base"
git archive "$BASE" | tar -x -C "$work/base"
# CPU seconds (user + sys of the go command and its compilers) say more
# than wall time on a shared machine.
TIMEFORMAT='%R s wall, %U s user + %S s sys'
build() { # build DIR OUT CACHE
	{ time (cd "$1" && GOCACHE="$3" go build -o "$2" ./cmd/benchrig); } 2>&1
}
size() { stat -c %s "$1" | awk '{ printf "%d bytes (%.1f MiB)", $1, $1 / 1048576 }'; }
base_time=$(build "$work/base" "$work/benchrig-base" "$work/cache-base")
head_time=$(build "$PWD" "$work/benchrig-head" "$work/cache-head")
echo "cold build of benchrig at $BASE (no SQLite driver): $base_time; binary $(size "$work/benchrig-base")"
echo "cold build of benchrig now (with modernc.org/sqlite): $head_time; binary $(size "$work/benchrig-head")"
file "$work/benchrig-head" | sed "s|$work/||; s|, Go BuildID=[^,]*||; s|, BuildID\[sha1\]=[^,]*||"
