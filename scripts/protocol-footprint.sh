#!/usr/bin/env bash
# scripts/protocol-footprint.sh KEY: every file outside a protocol's own
# directory that must change with the protocol, one path a line, and their
# count on stderr. KEY is a protocol key of the suite (http, pg, resp, …).
# What counts is said in scripts/footprint/main.go: imports of the
# protocol's packages and uses, as the type checker resolves them, of its
# suite constant, its Path section and that section's type; and the
# Markdown files that name its directory.
#
#   scripts/protocol-footprint.sh resp
set -euo pipefail
cd "$(dirname "$0")/.."
"${GO:-go}" build -o bin/footprint ./scripts/footprint
exec bin/footprint "$@"
