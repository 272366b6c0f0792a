# ordo — see README.md. `make run` starts a dev agent; `make test` is what CI runs.
GO       ?= go
BIN      := bin/ordo
FUZZTIME ?= 10s
# A CPU profile of a from-scratch projection rebuild (`make pgo` writes it
# again) that `go build` optimizes the binaries with (profile-guided
# optimization: inlining and layout where the rebuild, and the FSM's
# apply it shares, spend their time); PGO= builds without.
PGO      ?= pgo/rebuild.pgo
PGOFLAG  := $(if $(PGO),-pgo=$(PGO),-pgo=off)

.PHONY: all build run test fmt-check vet unit bench chaos fuzz pgo clean

all: build

build:
	$(GO) build $(PGOFLAG) -o $(BIN) ./cmd/ordo

# One server with data in a temp dir; the API on 127.0.0.1:4646.
run: build
	./$(BIN) agent -dev

test: fmt-check vet unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# -tags bench: the benchmarks kept out of make test's build (their test
# binaries would link a whole agent for nothing), checked all the same.
vet:
	$(GO) vet ./...
	$(GO) vet -tags bench ./commands/variables/

# -s -w: test binaries without a symbol table or DWARF, which the race
# detector and panics do not need (they use the pclntab); linking ~120 race
# test binaries (through gcc: cgo) is most of the run on two cores, and
# mold, when installed (.ci/run installs it), links them a fifth faster
# than ld. -p 4: four packages at a time, so the cluster tests' waits on
# real timers overlap other work. -vet=off: `make vet` has just run every
# analyzer go test would run again (its subset is cached when warm, but
# on a clean clone it is a second pass over every package).
# atexit_sleep_ms=0: a race-enabled process otherwise sleeps a second as it
# exits (so late reports can print), which each of ~120 test binaries, and
# every race-built child process the tests start, would wait for.
export GORACE ?= atexit_sleep_ms=0
EXTLD := $(if $(shell command -v mold 2>/dev/null),-extldflags=-fuse-ld=mold)
unit:
	$(GO) test -race -vet=off -ldflags='-s -w $(EXTLD)' -p 4 -count=1 -timeout 9m ./...

# Prints one table: figure, value, unit. Long runs live here, not in test.
# BENCHFLAGS picks figures and sizes, e.g. BENCHFLAGS="-only simfleet -nodes 2000".
bench:
	$(GO) run $(PGOFLAG) ./tools/bench -doc docs/benchmarks.md $(BENCHFLAGS)
	$(GO) test $(PGOFLAG) -tags bench -run '^$$' -bench . -benchtime 2s ./events/ ./storage/raftstore/ ./projections/ ./commands/acl/ ./commands/variables/ ./history/timetravel/

# The long linearizability run (TestLinearizable, test/cluster): 24 faults on the
# leader (kill, pause, partition, transfer) under six clients and at least
# 10,000 operations, checked with porcupine; prints its figures.
chaos:
	ORDO_CHAOS=1 $(GO) test -count=1 -timeout 45m -run '^TestLinearizable$$' -v ./test/cluster

# A short pass of every fuzz target.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Writes the profile PGO builds with again: a from-scratch rebuild of a
# generated 1,000,000-event history (about three minutes), profiled.
pgo:
	$(GO) run -pgo=off ./tools/bench -only rebuild-scratch -rebuild-runs 1 -rebuild-profile $(or $(PGO),pgo/rebuild.pgo)

clean:
	rm -rf bin
