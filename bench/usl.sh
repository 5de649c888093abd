#!/usr/bin/env bash
# The Universal Scalability Law fit against a known contention: the stall
# example server sleeps DELAY per request, then LOCKED more while holding
# one lock every request shares, so a share f = LOCKED/(DELAY+LOCKED) of
# each request is serialised (Amdahl's law: σ = f, κ = 0). For each f, a
# closed-loop connections ladder (benchrig http -c 1,2,4,…), its report's
# USL fit, and the fitted σ beside f. Sleeping, not burning, keeps the
# machine's two cores out of the shape. Server on CPU 0, client on CPU 1.
#
#   bench/usl.sh                          # f = 0, 0.05, 0.1, 0.2, 0.4
#   DUR=2s LADDER=1,2,4,8,16,32 bench/usl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-2s}
LADDER=${LADDER:-1,2,4,8,16,32,64}
TOTAL_US=${TOTAL_US:-2000}
work=$(mktemp -d -t benchrig-usl.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
go build -o "$work/benchrig" ./cmd/benchrig
go build -o "$work/stall" ./examples/servers/stall
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-10s %-10s %-12s %-10s %-8s\n' f locked_us sigma kappa lambda R2
for f in ${FRACTIONS:-0 0.05 0.1 0.2 0.4}; do
  locked=$(awk -v f="$f" -v t="$TOTAL_US" 'BEGIN { printf "%d", f * t }')
  delay=$((TOTAL_US - locked))
  port=$((20000 + RANDOM % 20000))
  "$work/benchrig" http "http://127.0.0.1:$port/" \
    --target-cpus 0 --target "$work/stall -addr 127.0.0.1:$port -delay ${delay}us -locked ${locked}us" \
    --client-cpus 1 -c "$LADDER" -d "$DUR" --max-p99 10s --no-calibrate -o "$work/f$f.json" >/dev/null 2>"$work/f$f.err" || { cat "$work/f$f.err"; exit 1; }
  "$work/benchrig" report "$work/f$f.json" -f md -o "$work/f$f.md" >/dev/null
  row=$(awk -F'|' '/^\| [a-z]+ request \| [0-9]/ { gsub(/ /, "", $4); gsub(/ /, "", $5); gsub(/ /, "", $6); gsub(/ /, "", $8); print $5, $6, $4, $8; exit }' "$work/f$f.md")
  # shellcheck disable=SC2086
  printf '%-6s %-10s %-10s %-12s %-10s %-8s\n' "$f" "$locked" $row
done
