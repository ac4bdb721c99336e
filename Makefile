# observer: build, test and benchmark. Every Go command uses the same tags so the cgo SQLite build
# is compiled once and cached.
GO       ?= go
TAGS     := sqlite_fts5
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
CMDS     := $(notdir $(wildcard cmd/*))

.PHONY: help build up install test check e2e bench clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-8s %s\n", $$1, $$2}'

build: ## build every binary into ./bin
	@mkdir -p bin
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

up: build ## build, then start the suite in the foreground on its defaults
	./bin/observerctl up

PREFIX ?= $(HOME)/.local
RELEASE  := build/release
install: ## release build (-trimpath, symbols stripped) of the suite into $(PREFIX)/bin, with each binary's size
	@mkdir -p $(RELEASE)
	$(GO) build -tags $(TAGS) -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(RELEASE)/ $(filter-out ./cmd/observer-fakeapi,$(addprefix ./cmd/,$(CMDS)))
	install -d $(PREFIX)/bin
	install -m 0755 $(RELEASE)/* $(PREFIX)/bin/
	@ls -l $(RELEASE) | awk 'NR>1 {printf "  %-18s %5.1f MB\n", $$9, $$5/1048576; t += $$5} END {printf "  %-18s %5.1f MB\n", "total", t/1048576}'

test: ## vet, then every test with the race detector, end-to-end included (the README's test command); ends with the skipped tests by reason
	$(GO) vet -tags $(TAGS) ./...
	GO=$(GO) $(GO) run scripts/testsummary.go -race -tags $(TAGS) -count=1 -timeout 40m ./...

check: ## gofmt, then make test
	@test -z "$$(gofmt -l .)" || (echo "gofmt would change:"; gofmt -l .; exit 1)
	$(MAKE) test

e2e: ## run only the end-to-end tests on the real binaries
	$(GO) test -tags $(TAGS) -count=1 -timeout 30m -v ./e2e/...

bench: ## deployed-form benchmarks: cold scan (beside the parse-only floor and ccusage), each reader's MB/s beside Claude Code's, `up` until settled then 3 minutes idle (CPU, RSS, the watcher's share of a core), proxy vs a bare ReverseProxy, bus-to-store vs raw SQLite, idle memory, request compression per 200 KB body, the OTLP receiver under load, team mode (hub + 3 members: throughput vs one writer, member-to-hub delay), the hook with observer down vs a bare process (ROUNDS=n, BASE=rev)
	./scripts/bench-cold-scan.sh
	./scripts/bench-readers.sh
	./scripts/bench-deployed.sh
	./scripts/bench-proxy.sh
	RUNS=$${RUNS:-$${ROUNDS:-3}} ./scripts/bench-pipeline.sh
	go test ./pkg/compress/ -run '^$$' -bench Request_200KB -benchtime 300x -count $${ROUNDS:-3}
	./scripts/bench-otlp.sh
	./scripts/bench-team.sh
	ROUNDS=$${ROUNDS:-3} ./scripts/bench-hook.sh

clean: ## remove ./bin and the release build
	rm -rf bin build
