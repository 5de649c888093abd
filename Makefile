# benchrig — build, test, demo.
GO       ?= go
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c-dirty; })
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build test demo clean fuzz

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/benchrig ./cmd/benchrig
	$(GO) build -o bin/hello ./examples/servers/hello
	$(GO) build -o bin/stall ./examples/servers/stall
	$(GO) build -o bin/respcache ./examples/servers/respcache

# The README's test command. Tests that need PostgreSQL or redis-server start
# their own; with CI=true a missing server is a failure, not a skip.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 12m ./...

# The README's first command: the built-in demo.
demo: build
	./scripts/demo.sh

fuzz:
	$(GO) test ./internal/resp -run '^$$' -fuzz FuzzReader -fuzztime 60s

clean:
	rm -rf bin
