#!/usr/bin/env bash
# The seeds' and examples' npm packages (Node 24, 12.13.0 and 16.13.2 as
# npm packages, node-postgres, the frameworks, @grpc/grpc-js), from their
# committed package-lock.json:
# `npm ci` in each seed whose node_modules is missing or was installed from
# another lock file (a stamp beside it holds the lock file's SHA-256). Run
# by `make test` and `make seeds-npm`; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

for d in examples/seeds/000 examples/seeds/002 examples/seeds/003 examples/grpc; do
	want=$(sha256sum "$d/package-lock.json" | cut -d' ' -f1)
	stamp="$d/node_modules/.benchrig-lock-sha256"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		continue
	fi
	echo "seeds-npm: npm ci in $d"
	(cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
done
