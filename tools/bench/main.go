// Command bench measures ordo on this machine and prints one table of
// figures (figure, value, unit) that can be compared between runs:
// acknowledged writes/s and p50/p99 latency with concurrent HTTP clients on
// one server and on three servers on loopback, the FSM apply rate and the
// archive replay rate, a C1M-style scheduling run (and, c1m-ports, the
// same run beside one whose allocations each hold a port and a checked
// service, with service registration and blocking-read figures;
// tools/bench/c1mports.go), and the simfleet
// figures: simulated nodes (tools/simfleet) heartbeating against a server
// in a child process, and the C1M-style run over HTTP with every
// allocation acked by the fleet.
//
// The rebuild figures rebuild every projection from a generated history of
// 1,000,000 scheduling events (tools/bench/rebuild.go). The mirror
// figures mirror 1,000,000 archived events to kfake from cold, and measure
// the lag under 5,000 writes/s and writes with and without the mirror
// (tools/bench/mirror.go). The chaos figures are those of the long
// linearizability run (TestLinearizable in test/cluster, `make chaos`): operations,
// failovers, unknown outcomes and the unavailability after each kind of
// leader fault (tools/bench/chaos.go). The docker figures start 100
// docker allocations on one client against a dockerd of the bench's own
// and compare their start-to-running latency with the daemon's own create
// and start, and measure the agent's CPU per idle container
// (tools/bench/docker.go). The ui figures time the web UI's first screens
// (jobs page, timeline) in a headless Chromium against a server holding
// 10,000 jobs in a log of 1,000,000 events, and its frames and long tasks
// while the timeline follows 5,000 events/s (tools/bench/ui.go).
//
// Usage:
//
//	go run ./tools/bench [-clients 64] [-duration 10s] [-replay 200000]
//	go run ./tools/bench -addr 127.0.0.1:4646   # load an existing server only
//	go run ./tools/bench -only simfleet,c1m-http -nodes 2000 -jobs 10   # a quick fleet run
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// row is one line of the printed table.
type row struct {
	figure string
	value  float64
	unit   string
}

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(serveChild(spec)) // the simfleet figures' server
	}
	clients := flag.Int("clients", 64, "concurrent HTTP clients")
	duration := flag.Duration("duration", 10*time.Second, "how long each load runs")
	replay := flag.Int("replay", 200000, "events in the archive for the apply and replay figures")
	addr := flag.String("addr", "", "load this server's HTTP address instead of starting servers")
	only := flag.String("only", "", "run only these, comma-separated: load1, load3, apply, replay, export, history, rebuild, rebuild-scratch, rebuild-online, rebuild-writes, snapshot, timetravel, c1m, c1m-ports, simfleet, simfleet-fast, c1m-http, mirror, mirror-codecs, mirror-writes, mirror-catchup, mirror-steady, evaldelete, rotation, launcher, csi, chaos, docker, ui")
	nodes := flag.Int("nodes", 0, "simulated nodes (0: 5000 for c1m and c1m-ports, 10000 for simfleet, simfleet-fast and c1m-http)")
	jobs := flag.Int("jobs", 0, "jobs for c1m, c1m-ports and c1m-http (0: 100 for c1m and c1m-ports, 5 for c1m-http)")
	perJob := flag.Int("per-job", 1000, "allocations per job for c1m and c1m-http")
	fleetWindow := flag.Duration("fleet-window", time.Minute, "how long simfleet and simfleet-fast measure heartbeats")
	fastTTL := flag.Duration("fleet-fast-ttl", time.Second, "the heartbeat TTL of simfleet-fast (the server's rate limit lifted)")
	workers := flag.Int("workers", 0, "scheduler workers for c1m and c1m-http (0: the agent's default)")
	evalDeleteN := flag.Int("evaldelete-evals", 1000000, "pending evals the evaldelete figures seed and delete by filter")
	evalDeletePage := flag.Int("evaldelete-page", 0, "page size of the evaldelete figures (0: the server's default)")
	evalDeleteSeed := flag.Int("evaldelete-seed-batch", 1000, "evals per entry when the evaldelete figures seed")
	evalDeleteWriters := flag.Int("evaldelete-writers", 8, "concurrent writers (closed loop: each writes again as soon as answered) during the evaldelete figures")
	launcherN := flag.Int("launcher-requests", 10000, "node requests the launcher figures create over 3 sim providers")
	csiN := flag.Int("csi-volumes", 1000, "per-alloc volumes the csi figures claim and release")
	chaosFaults := flag.Int("chaos-faults", 24, "leader faults of the chaos figures (TestLinearizable's long run)")
	chaosOps := flag.Int("chaos-ops", 10000, "operations the chaos figures' history holds at least")
	doc := flag.String("doc", "", "a markdown page (docs/benchmarks.md) to merge the figures into: measured rows replace theirs, the others stay")
	chaosRaftTimeout := flag.Duration("chaos-raft-timeout", 0, "the chaos figures' servers' -raft-timeout (0: the default)")
	chaosQuiet := flag.Bool("chaos-quiet", false, "run the chaos figures without the load TestLinearizable adds (servers at GOMAXPROCS=1, a CPU hog)")
	rotationN := flag.Int("rotation-variables", 100000, "variables the rotation figures seed and re-encrypt with rotate -full")
	dockerN := flag.Int("docker-allocs", 100, "docker allocations the docker figures start on one client")
	dockerIdle := flag.Duration("docker-idle", 5*time.Second, "the idle window the docker figures measure CPU over")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	rebuildN := flag.Int("rebuild-events", 1_000_000, "events in the generated history of the rebuild and timetravel figures")
	flag.StringVar(&rebuildProfile, "rebuild-profile", "", "write a CPU profile of the from-scratch rebuild alone here (its first run)")
	flag.IntVar(&rebuildRuns, "rebuild-runs", rebuildRuns, "from-scratch rebuilds to time: the figures are the median run's, with the fastest and slowest rates")
	rebuildSrc := flag.String("rebuild-src", "", "rebuild-scratch, rebuild-online, rebuild-writes, snapshot and timetravel keep their generated history in this directory and reuse it on the next run")
	flag.Parse()
	stopProfile, err := startProfile(*cpuprofile) // rebuild.go
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer stopProfile()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	// The servers the benches start in this process collect garbage as
	// `ordo agent` has a server's process collect it.
	percent, limit := agent.TuneGC("/proc")
	fmt.Fprintf(os.Stderr, "bench: Go GC target %d%% (0: $GOGC's), soft memory limit %d MiB (0: $GOMEMLIMIT's or none)\n", percent, limit>>20)

	var rows []row
	run := func(name string, f func() ([]row, error)) {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), name) {
			return
		}
		fmt.Fprintf(os.Stderr, "bench: %s…\n", name)
		r, err := f()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
			stopProfile()
			printTable(rows) // what was measured before
			os.Exit(1)
		}
		rows = append(rows, r...)
	}
	if *addr != "" {
		run("load", func() ([]row, error) { return loadRows("external", []string{*addr}, *clients, *duration, false) })
	} else {
		run("load1", func() ([]row, error) { return clusterLoad(1, *clients, *duration) })
		run("load3", func() ([]row, error) { return clusterLoad(3, *clients, *duration) })
		run("apply", func() ([]row, error) { return applyRate(*replay) })
		run("replay", func() ([]row, error) { return replayRate(*replay) })
		run("export", func() ([]row, error) { return exportReplayRates(*exportEvents) }) // export.go
		run("history", func() ([]row, error) { return historyLatency(101000, 1000) })
		run("rebuild", func() ([]row, error) { return rebuildRows(*rebuildN) })                                 // rebuild.go
		run("rebuild-scratch", func() ([]row, error) { return scratchRows(*rebuildN, *rebuildSrc, "scratch") }) // rebuild.go
		run("rebuild-online", func() ([]row, error) { return scratchRows(*rebuildN, *rebuildSrc, "online") })
		run("rebuild-writes", func() ([]row, error) { return scratchRows(*rebuildN, *rebuildSrc, "writes") })
		run("snapshot", func() ([]row, error) { return snapshotRows(*rebuildN, *rebuildSrc) })         // snapshot.go
		run("timetravel", func() ([]row, error) { return timeTravelRows(*rebuildN, *rebuildSrc, 20) }) // timetravel.go
		run("c1m", func() ([]row, error) { return c1m(or(*nodes, 5000), or(*jobs, 100), *perJob, *workers) })
		run("c1m-ports", func() ([]row, error) { return c1mPorts(or(*nodes, 5000), or(*jobs, 100), *perJob, *workers) })
		run("simfleet", func() ([]row, error) { return fleetHeartbeats(or(*nodes, 10000), *fleetWindow, 0) })
		run("simfleet-fast", func() ([]row, error) { return fleetHeartbeats(or(*nodes, 10000), *fleetWindow, *fastTTL) })
		run("c1m-http", func() ([]row, error) { return c1mHTTP(or(*nodes, 10000), or(*jobs, 5), *perJob, *workers) })
		run("mirror", func() ([]row, error) { return mirrorRows(mirrorEvents, 5000, *clients, *duration) }) // mirror.go
		run("mirror-codecs", func() ([]row, error) { return mirrorCodecRows(200_000) })                     // mirror.go
		run("mirror-writes", func() ([]row, error) { return mirrorWriteRows(3, *clients, *duration) })      // mirror.go
		run("mirror-catchup", func() ([]row, error) { return mirrorCatchUpRows(mirrorEvents, 5) })          // mirror.go
		run("mirror-steady", func() ([]row, error) { return mirrorSteadyRows(20_000, *duration, 3) })       // mirror.go
		run("evaldelete", func() ([]row, error) {
			return evalDeleteRows(*evalDeleteN, *evalDeletePage, *evalDeleteSeed, *evalDeleteWriters)
		}) // evaldelete.go
		run("rotation", func() ([]row, error) { return rotationRows(*rotationN) })        // rotation.go
		run("launcher", func() ([]row, error) { return launcherRows(*launcherN) })        // launcher.go
		run("csi", func() ([]row, error) { return csiRows(*csiN) })                       // csi.go
		run("docker", func() ([]row, error) { return dockerRows(*dockerN, *dockerIdle) }) // docker.go
		run("ui", func() ([]row, error) {
			return uiRows(*uiEvents, *uiJobs, *uiEntry, *uiTail, *uiRate, *uiRateBatch, *uiFollow, *uiLoads)
		}) // ui.go
		// chaos.go: the figures of TestLinearizable's long run
		run("chaos", func() ([]row, error) { return chaosRows(*chaosFaults, *chaosOps, *chaosQuiet, *chaosRaftTimeout) })
	}
	printTable(rows)
	if *doc != "" {
		if err := writeFigures(*doc, rows, time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
	}
}

func printTable(rows []row) {
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tvalue\tunit\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t\n", r.figure, r.value, r.unit)
	}
	tw.Flush()
}

// or returns v, or def when v is 0.
func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
