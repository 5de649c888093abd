# benchrig — build, test, demo.
GO       ?= go
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c-dirty; })
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build test test-loaded deps seeds-npm demo clean fuzz fuzz-short seed-000 seed-001 seed-002 seed-003 grpc-example

# Every binary the README's commands use.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/benchrig ./cmd/benchrig
	$(GO) build -o bin/hello ./examples/servers/hello
	$(GO) build -o bin/stall ./examples/servers/stall
	$(GO) build -o bin/respcache ./examples/servers/respcache
	$(GO) build -o bin/withpg ./examples/seeds/003/withpg

# The README's test command (scripts/test.sh): installs what the tests need
# (Debian packages when root, else it stops naming `make deps`; the seeds'
# npm packages), then go vet and every test. A missing part fails the run;
# SKIP=browser,seeds,... skips the tests of those kinds by name (refused
# under CI=true); the last lines list every skipped test and why.
test:
	GO=$(GO) ./scripts/test.sh

# The same, with two busy threads per CPU beside it (scripts/cpuhog).
test-loaded:
	GO=$(GO) ./scripts/test-loaded.sh

# The Debian packages the tests need (as root); .ci/run calls it too.
deps:
	./scripts/deps.sh

# The seeds' npm packages, where missing or stale.
seeds-npm:
	./scripts/seeds-npm.sh

# The README's first command: the built-in demo.
demo: build
	./scripts/demo.sh

# The seeds' examples, one command each: the full runs (tens of minutes),
# then the reports, in $(SEED_OUT). A results file already there is
# continued (--resume), not overwritten.
SEED_OUT ?= seed-out

# Seed 000: the Node.js app on node-postgres (Node 24 and pg from npm) with
# PostgreSQL as its headline companion, beside benchrig's own pg driver:
# the connections × keys matrix, then hot reads and the 5 % update mix.
seed-000: build
	cd examples/seeds/000 && npm ci --no-audit --no-fund
	mkdir -p $(SEED_OUT)
	./bin/benchrig run examples/seeds/000/suite.yaml -o $(SEED_OUT)/seed-000.json $$([ -f $(SEED_OUT)/seed-000.json ] && echo --resume)
	./bin/benchrig run examples/seeds/000/workloads.yaml -o $(SEED_OUT)/seed-000-workloads.json $$([ -f $(SEED_OUT)/seed-000-workloads.json ] && echo --resume)
	./bin/benchrig report $(SEED_OUT)/seed-000.json -o $(SEED_OUT)/seed-000.html
	./bin/benchrig report $(SEED_OUT)/seed-000-workloads.json -o $(SEED_OUT)/seed-000-workloads.html
	./bin/benchrig report $(SEED_OUT)/seed-000.json
	./bin/benchrig report $(SEED_OUT)/seed-000-workloads.json

# Seed 001: one PostgreSQL serving prepared SQL, ANY, the SQL function and
# RESP MGET (the in-repo sidecar), 64 connections × 1/64 keys × 3 repeats.
seed-001: build
	mkdir -p $(SEED_OUT)
	PATH="$(CURDIR)/bin:$$PATH" RESPCACHE_TOKEN="$${RESPCACHE_TOKEN:-$$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}" \
		./bin/benchrig run examples/seeds/001/suite.yaml -o $(SEED_OUT)/seed-001.json $$([ -f $(SEED_OUT)/seed-001.json ] && echo --resume)
	./bin/benchrig report $(SEED_OUT)/seed-001.json -o $(SEED_OUT)/seed-001.html
	./bin/benchrig report $(SEED_OUT)/seed-001.json

# Seed 002 (examples/seeds/002): six Node frameworks × four workloads × 100
# and 1,000 req/s on Node 24 from npm, ~4.5 h. SEED002_SET selects, e.g.
# make seed-002 SEED002_SET="--set targets=node-http" (~46 min).
SEED002_SET ?=
seed-002: build
	cd examples/seeds/002 && npm ci --no-audit --no-fund
	cd examples/seeds/002 && ../../../bin/benchrig run suite.yaml -o seed002.json $(SEED002_SET)
	cd examples/seeds/002 && ../../../bin/benchrig verify seed002.json && ../../../bin/benchrig report seed002.json -o seed002.html

# Seed 003 (examples/seeds/003): raw http, Express 4 and Express reading
# PostgreSQL through node-postgres, on Node 12.13.0 and 16.13.2 from npm,
# 10 connections, 10 s, 5 repeats (~10 min); the database started once by
# withpg; then compare the runtimes case by case (Mann–Whitney U).
SEED003_CASES := raw=root express=root express=small express=medium
seed-003: build
	cd examples/seeds/003 && npm ci --no-audit --no-fund
	cd examples/seeds/003 && ../../../bin/withpg -sql data.sql -env SEED003_PG -- ../../../bin/benchrig run suite.yaml -o seed003.json --force
	cd examples/seeds/003 && ../../../bin/benchrig verify seed003.json && ../../../bin/benchrig report seed003.json -o seed003.html
	@cd examples/seeds/003 && for c in $(SEED003_CASES); do t=$${c%%=*}; p=$${c#*=}; \
		echo "== $$t $$p: Node 12.13.0 (A) vs 16.13.2 (B)"; \
		../../../bin/benchrig compare seed003.json --a "$$t node=node_modules/node12/bin/node $$p" --b "$$t node=node_modules/node16/bin/node $$p" || exit 1; \
	done

# examples/grpc: one gRPC service served by grpc-go and by @grpc/grpc-js on
# Node 24 from npm (examples/grpc/servers.yaml, ~4 min), and the same
# SayHello as gRPC and as JSON over HTTP/1.1 from one Go binary
# (examples/suites/grpc-vs-json.yaml, ~6 min), then their reports and the
# gRPC-against-JSON comparison, case by case.
grpc-example: build
	$(GO) build -o bin/greeter-server ./internal/grpcephemeral/cmd/greeter-server
	cd examples/grpc && npm ci --no-audit --no-fund
	mkdir -p $(SEED_OUT)
	./bin/benchrig run examples/grpc/servers.yaml -o $(SEED_OUT)/grpc-servers.json $$([ -f $(SEED_OUT)/grpc-servers.json ] && echo --resume)
	./bin/benchrig run examples/suites/grpc-vs-json.yaml -o $(SEED_OUT)/grpc-vs-json.json $$([ -f $(SEED_OUT)/grpc-vs-json.json ] && echo --resume)
	./bin/benchrig report $(SEED_OUT)/grpc-servers.json -o $(SEED_OUT)/grpc-servers.html
	./bin/benchrig report $(SEED_OUT)/grpc-vs-json.json -o $(SEED_OUT)/grpc-vs-json.html
	./bin/benchrig report $(SEED_OUT)/grpc-servers.json
	./bin/benchrig report $(SEED_OUT)/grpc-vs-json.json
	./bin/benchrig compare $(SEED_OUT)/grpc-vs-json.json --a grpc --b json

fuzz:
	$(GO) test ./internal/resp -run '^$$' -fuzz FuzzReader -fuzztime 60s

# Every fuzz target of the repo, as package:Target. A new Fuzz function is
# added here; `make fuzz-short` fails on one it does not list.
FUZZ_TARGETS := \
	./internal/resp:FuzzReader \
	./internal/resp:FuzzReadCommand \
	./internal/resp:FuzzReadBuffered \
	./internal/resp:FuzzReaderChunking \
	./internal/target:FuzzParseCPUList \
	./internal/secret:FuzzRedact \
	./internal/secret:FuzzScrub \
	./internal/secret:FuzzText \
	./internal/secret:FuzzDSNType \
	./internal/protocol/pg/driver:FuzzRowDecoder \
	./internal/protocol/pg/driver:FuzzSQLValue \
	./internal/protocol/pg/driver:FuzzSQLBinaryArray \
	./internal/protocol/pg/driver:FuzzLoopFraming \
	./internal/protocol/http/driver:FuzzParsers \
	./internal/proc:FuzzParseStat \
	./internal/proc:FuzzParseStatFields \
	./internal/suite:FuzzParse \
	./internal/metrics:FuzzMetricsText \
	./internal/suite:FuzzParseExpr \
	./internal/result:FuzzReadFile \
	./internal/quick:FuzzSplitCommand \
	./internal/report:FuzzQuickDoc \
	./internal/agent/k8s:FuzzFetch \
	./internal/protocol/http/driver:FuzzTargetsFile \
	./internal/protocol/http/driver:FuzzURL \
	./internal/protocol/http/driver:FuzzH2Read \
	./internal/protocol/pg/driver:FuzzDSN \
	./internal/suite:FuzzParseDuration \
	./internal/suite:FuzzOverrides \
	./internal/report:FuzzParseGate \
	./internal/protocol/resp/respserver:FuzzINFO \
	./internal/protocol/resp/driver:FuzzReplyScan \
	./internal/protocol/http/driver:FuzzStatusDecoder \
	./internal/proc:FuzzParseLocks \
	./internal/proc:FuzzDiagDump \
	./internal/agent:FuzzCoordinator \
	./internal/cgroup:FuzzParseMemory \
	./internal/changepoint:FuzzDetect \
	./internal/capacity:FuzzSearch \
	./internal/usl:FuzzFit \
	./internal/protocol/grpc/message:FuzzSplit \
	./internal/protocol/grpc/driver:FuzzStreamFraming \
	./internal/protocol/grpc/message:FuzzGunzip
FUZZTIME ?= 3s

# Each fuzz target for FUZZTIME (40 × 3 s plus their builds ≈ 4 minutes), under a soft memory
# limit; each target also bounds what one input may allocate (internal/fuzzcheck).
# scripts/fuzz-one.sh runs a target again once when Go 1.26's fuzz coordinator
# fails it on its own deadline with no failing input (golang/go#75804).
fuzz-short:
	@listed=$$(for t in $(FUZZ_TARGETS); do echo $${t#*:}; done | sort); \
	found=$$(grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/^func //' | sort); \
	if [ "$$listed" != "$$found" ]; then \
		echo "fuzz-short: FUZZ_TARGETS differs from the Fuzz functions of the repo:"; \
		echo "listed: $$listed"; echo "found:  $$found"; exit 1; fi
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		GO=$(GO) ./scripts/fuzz-one.sh $$pkg $$name $(FUZZTIME); \
	done

clean:
	rm -rf bin
