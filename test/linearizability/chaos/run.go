package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
)

// Config is a run: a cluster, a workload and a schedule of faults.
type Config struct {
	// Bin is the ordo binary (BuildBinary); Dir holds the servers' data
	// and logs.
	Bin, Dir string
	// Clients is how many workload clients run at once; default 6.
	Clients int
	// Variables is how many variables the clients share; Jobs how many
	// jobs. Both 0: 3 variables and 1 job.
	Variables, Jobs int
	// Faults is how many faults the run brings, in the order of Kinds
	// (default kill, pause, partition, and transfer when the binary has
	// `ordo operator raft transfer-leadership`).
	Faults int
	Kinds  []FaultKind
	// Hold is how long a pause or a partition lasts at least; default
	// 4s. It lasts until another server leads and took a write, however
	// short Hold is.
	Hold time.Duration
	// Quiet is the time without faults before each fault; default 2s.
	Quiet time.Duration
	// MinOps: the workload goes on after the last fault until the history
	// holds this many operations (and at least Quiet).
	MinOps int
	// RequestTimeout bounds each client request; default 2s.
	RequestTimeout time.Duration
	// ServerProcs, when above 0, is the servers' GOMAXPROCS (1 makes the
	// window of a stale read wider).
	ServerProcs int
	// Hogs is how many goroutines of this process burn CPU during the run,
	// to load the machine as other work would.
	Hogs int
	// Seed seeds the clients' choices; 0 picks one.
	Seed uint64
	// ExtraArgs are passed to every `ordo agent`.
	ExtraArgs []string
	// Logf reports progress; default discards.
	Logf func(format string, args ...any)
}

// ShortConfig is the run `make test` makes: four faults (every kind
// once: kill, pause, partition, transfer), servers with GOMAXPROCS=1,
// four clients and half a second of quiet before each fault. A pause or
// a partition is held for a second, and in any case until the other
// servers have elected a leader that took a write (the probe), so the
// old leader still comes back to a cluster that moved on, which is the
// window a stale read needs. It burns no CPU of its own: `make test`
// runs it beside three other packages' tests, which load the machine
// already (LongConfig, run alone by `make chaos`, adds a hog). With 4 s
// holds and 1 s of quiet it took ~16 s and ~8 CPU-s for ~1,800
// operations; this takes about half of both.
func ShortConfig(bin, dir string) Config {
	return Config{Bin: bin, Dir: dir, Faults: 4, ServerProcs: 1, Clients: 4,
		Quiet: 500 * time.Millisecond, Hold: time.Second}
}

// LongConfig is the run of `make chaos` and `make bench`'s chaos figures:
// 24 faults and at least 10,000 operations, under the same load.
func LongConfig(bin, dir string) Config {
	return Config{Bin: bin, Dir: dir, Faults: 24, MinOps: 10000, ServerProcs: 1, Hogs: 1}
}

func (c *Config) defaults() {
	if c.Clients == 0 {
		c.Clients = 6
	}
	if c.Variables == 0 && c.Jobs == 0 {
		c.Variables, c.Jobs = 3, 1
	}
	if len(c.Kinds) == 0 {
		c.Kinds = []FaultKind{FaultKill, FaultPause, FaultPartition}
		if hasTransfer(c.Bin) {
			c.Kinds = append(c.Kinds, FaultTransfer)
		}
	}
	if c.Hold == 0 {
		c.Hold = 4 * time.Second
	}
	if c.Quiet == 0 {
		c.Quiet = 2 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 2 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

// Result is what a run recorded.
type Result struct {
	// Raw is the history as recorded, before resolve.
	Raw []porcupine.Operation
	// History is every operation that answered or may have had an
	// effect, as the checker takes it (resolve): an unknown outcome's
	// Return is the end of the history.
	History []porcupine.Operation
	// Unknown counts operations whose outcome is unknown: of them,
	// UnknownApplied were shown applied by an answer and UnknownDropped
	// shown by none, left out of History (resolve). Conflicts counts the
	// cas refusals; Skipped the operations left out because they did
	// nothing (reads that failed, requests to a stopped server).
	Unknown, UnknownApplied, UnknownDropped, Conflicts, Skipped int
	// Statuses counts the HTTP statuses answered (0: none).
	Statuses map[int]int
	// Samples holds a few failed answers per status (0: no answer).
	Samples map[int][]string
	// Unexpected lists answers no correct server gives (at most 20).
	Unexpected []string
	// Faults are the faults brought, in order.
	Faults []Fault
	// Seed is the clients' seed; Elapsed the workload's duration.
	Seed    uint64
	Elapsed time.Duration
}

// Run starts a cluster, runs the workload while the faults are brought,
// stops everything and returns the history. A cluster that cannot form or
// recover is an error; whether the history is linearizable is Check's.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	cl, err := StartCluster(ctx, ClusterConfig{Bin: cfg.Bin, Dir: cfg.Dir, ServerProcs: cfg.ServerProcs,
		ExtraArgs: cfg.ExtraArgs, Logf: cfg.Logf})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	cfg.Logf("cluster formed: %s", describeServers(cl.servers))

	var regs []register
	for i := range cfg.Variables {
		regs = append(regs, variable{path: fmt.Sprintf("chaos/r%d", i)})
	}
	for i := range cfg.Jobs {
		regs = append(regs, job{id: fmt.Sprintf("chaos-%d", i)})
	}

	hist := newHistory()
	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	stopHogs := startHogs(wctx, cfg.Hogs)
	waitClients := startClients(wctx, cfg.Clients, regs, cl.servers, cfg.RequestTimeout, hist, cfg.Seed)

	n := &nemesis{c: cl, cfg: cfg, client: &http.Client{Transport: newTransport()}, start: hist.start, logf: cfg.Logf}
	faults, ferr := n.run(wctx)
	if ferr == nil {
		// Quiet time after the last fault, and enough operations.
		n.quiet(wctx, cfg.Quiet)
		poll(wctx, 10*time.Minute, func() bool {
			hist.mu.Lock()
			defer hist.mu.Unlock()
			return len(hist.mu.ops) >= cfg.MinOps
		})
	}
	stopWork()
	waitClients()
	stopHogs()
	elapsed := time.Since(hist.start)

	hist.mu.Lock()
	res := &Result{Unknown: hist.mu.unknown, Conflicts: hist.mu.conflicts, Skipped: hist.mu.skipped,
		Statuses: hist.mu.statuses, Samples: hist.mu.samples, Unexpected: hist.mu.unexpected, Faults: faults, Seed: cfg.Seed, Elapsed: elapsed}
	hist.mu.Unlock()
	res.Raw = hist.operations()
	res.History, res.UnknownApplied, res.UnknownDropped = resolve(res.Raw)
	if ferr != nil && ctx.Err() == nil {
		return res, fmt.Errorf("fault schedule: %w (server logs in %s)", ferr, cfg.Dir)
	}
	return res, ctx.Err()
}

func describeServers(ss []*Server) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("s%d http %s raft %s via %s", s.Index, s.HTTP, s.Raft, s.Advertise))
	}
	return strings.Join(parts, "; ")
}

// startHogs runs n goroutines that burn CPU until ctx ends; the returned
// func joins them.
func startHogs(ctx context.Context, n int) func() {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for ctx.Err() == nil {
				for range 1 << 16 {
					x = x*6364136223846793005 + 1442695040888963407
				}
				runtime.Gosched()
			}
			_ = x
		}()
	}
	return wg.Wait
}

// Failovers counts the faults after which another server led.
func (r *Result) Failovers() int {
	n := 0
	for _, f := range r.Faults {
		if f.Failover() {
			n++
		}
	}
	return n
}

// Verdict is what Check found.
type Verdict struct {
	// Result is porcupine's: Ok, Illegal, or Unknown (out of time).
	Result porcupine.CheckResult
	// HTML is the path of porcupine's visualization of the history,
	// written when Result is not Ok.
	HTML string
	// Explanation says where an Illegal history gets stuck (Explain).
	Explanation string
}

// Check checks the history against Model within timeout. When the result
// is not Ok it writes porcupine's HTML visualization into dir.
func (r *Result) Check(timeout time.Duration, dir string) (Verdict, error) {
	m := Model()
	res, info := porcupine.CheckOperationsVerbose(m, r.History, timeout)
	v := Verdict{Result: res}
	if res == porcupine.Ok {
		return v, nil
	}
	if res == porcupine.Illegal {
		v.Explanation = Explain(r.History, info)
	}
	f, err := os.CreateTemp(dir, "linearizability-*.html")
	if err != nil {
		return v, fmt.Errorf("visualization: %w", err)
	}
	defer f.Close()
	v.HTML = f.Name()
	if err := porcupine.Visualize(m, info, f); err != nil {
		return v, fmt.Errorf("visualization: %w", err)
	}
	return v, nil
}

// Figure is one line of the figures a run prints.
type Figure struct {
	Name  string
	Value float64
	Unit  string
}

// Figures are the run's operations, failovers, unknown outcomes and, per
// kind of fault, the unavailability (fault to first acknowledged write)
// p50, p99 and max.
func (r *Result) Figures() []Figure {
	out := []Figure{
		{"operations", float64(len(r.History) + r.UnknownDropped), "ops"},
		{"operations/s", float64(len(r.History)+r.UnknownDropped) / r.Elapsed.Seconds(), "ops/s"},
		{"operations with unknown outcome", float64(r.Unknown), "ops"},
		{"unknown outcome, shown applied", float64(r.UnknownApplied), "ops"},
		{"cas conflicts", float64(r.Conflicts), "ops"},
		{"faults", float64(len(r.Faults)), "faults"},
		{"failovers", float64(r.Failovers()), "failovers"},
	}
	byKind := map[FaultKind][]time.Duration{}
	var kinds []FaultKind
	for _, f := range r.Faults {
		if byKind[f.Kind] == nil {
			kinds = append(kinds, f.Kind)
		}
		byKind[f.Kind] = append(byKind[f.Kind], f.Unavailable)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, k := range kinds {
		ds := byKind[k]
		slices.Sort(ds)
		name := "unavailability after " + string(k)
		out = append(out,
			Figure{string(k) + " faults", float64(len(ds)), "faults"},
			Figure{name + " p50", ms(percentile(ds, 50)), "ms"},
			Figure{name + " p99", ms(percentile(ds, 99)), "ms"},
			Figure{name + " max", ms(ds[len(ds)-1]), "ms"})
	}
	return out
}

// percentile is the nearest-rank p-th percentile of sorted ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := (len(ds)*p + 99) / 100
	return ds[max(i-1, 0)]
}

// Summary describes the run in a few lines: figures and statuses.
func (r *Result) Summary() string {
	var b strings.Builder
	for _, f := range r.Figures() {
		fmt.Fprintf(&b, "%-44s %10.1f %s\n", f.Name, f.Value, f.Unit)
	}
	codes := make([]int, 0, len(r.Statuses))
	for c := range r.Statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	fmt.Fprintf(&b, "statuses:")
	for _, c := range codes {
		fmt.Fprintf(&b, " %d×%d", c, r.Statuses[c])
	}
	fmt.Fprintf(&b, " (0: no answer); skipped %d; seed %d\n", r.Skipped, r.Seed)
	for _, c := range codes {
		for _, s := range r.Samples[c] {
			fmt.Fprintf(&b, "  %d: %s\n", c, s)
		}
	}
	return b.String()
}

// BuildBinary returns the cmd/ordo binary the servers run: with $ORDO_BIN
// set, that binary; otherwise cmd/ordo as localtest.BuildBinary links it,
// once per version of its sources for every test package and tool of a
// run, kept under the system's temporary directory (a link is seconds of
// CPU). dir is not used: the binary outlives the run.
func BuildBinary(dir string) (string, error) {
	if b := os.Getenv("ORDO_BIN"); b != "" {
		return b, nil
	}
	bin, err := localtest.BuildBinary()
	if err != nil {
		return "", fmt.Errorf("build cmd/ordo: %w", err)
	}
	return bin, nil
}
