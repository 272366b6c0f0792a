// Command simfleet simulates many client nodes against ordo servers over
// the HTTP client API (see package fleet): they register, heartbeat,
// long-poll their allocations and run them with mock-driver semantics.
//
// Usage:
//
//	go run ./tools/simfleet -servers 127.0.0.1:4646 -nodes 10000 [-run-for 5m] [-fail-rate 0.01] \
//	    [-metrics 127.0.0.1:9464] [-disconnect 0.1]
//
// While it runs, commands on stdin (or POSTs to the -metrics address)
// disconnect and reconnect nodes:
//
//	disconnect [fraction]   POST /disconnect?fraction=0.1   (default: -disconnect)
//	reconnect [fraction]    POST /reconnect?fraction=1      (default: all)
//	status                  GET  /status                    (the counters as JSON)
//	quit
//
// GET /metrics on the -metrics address serves the simfleet_* Prometheus
// metrics. A status line goes to stderr every -report.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ordoplane/ordo/tools/simfleet/fleet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simfleet:", err)
		os.Exit(1)
	}
}

func run() error {
	def := fleet.DefaultConfig()
	servers := flag.String("servers", "127.0.0.1:4646", "comma-separated server HTTP addresses")
	nodes := flag.Int("nodes", 10000, "nodes to simulate")
	prefix := flag.String("name-prefix", def.NamePrefix, "node names are <prefix>-<index>")
	seed := flag.Uint64("seed", def.Seed, "derives node ids, failures and the disconnect order; a fleet restarted with the same seed re-registers the same nodes")
	dc := flag.String("datacenter", def.Datacenter, "datacenter")
	class := flag.String("node-class", "", "node class")
	pool := flag.String("node-pool", def.NodePool, "node pool")
	cpu := flag.Int("cpu", def.CPU, "CPU per node, MHz")
	mem := flag.Int("memory", def.MemoryMB, "memory per node, MB")
	disk := flag.Int("disk", def.DiskMB, "disk per node, MB")
	drivers := flag.String("drivers", strings.Join(def.Drivers, ","), "drivers reported healthy")
	runFor := flag.Duration("run-for", 0, "allocations complete after this long (0: run until stopped)")
	failRate := flag.Float64("fail-rate", 0, "fraction of allocations that fail on start")
	disconnect := flag.Float64("disconnect", 0.1, "fraction of nodes a bare `disconnect` command disconnects")
	batch := flag.Duration("update-batch", def.UpdateBatch, "how long a node gathers allocation updates")
	startPar := flag.Int("start-parallel", def.StartParallel, "node sessions starting at once")
	callConns := flag.Int("call-conns", def.CallConns, "connections per server for register, heartbeat and update calls")
	metricsAddr := flag.String("metrics", "127.0.0.1:9464", "serve /metrics and the control endpoints here (empty: off)")
	report := flag.Duration("report", 10*time.Second, "status line interval on stderr (0: none)")
	verbose := flag.Bool("v", false, "log each failed call")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	f, err := fleet.New(fleet.Config{
		Servers: strings.Split(*servers, ","), Nodes: *nodes, NamePrefix: *prefix, Seed: *seed,
		Datacenter: *dc, NodeClass: *class, NodePool: *pool, CPU: *cpu, MemoryMB: *mem, DiskMB: *disk,
		Drivers: strings.Split(*drivers, ","), RunFor: *runFor, FailRate: *failRate,
		UpdateBatch: *batch, StartParallel: *startPar, CallConns: *callConns, Logger: logger,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &control{f: f, fraction: *disconnect}

	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() {
		runErr = f.Run(ctx)
		stop()
	})
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			stop()
			wg.Wait()
			return err
		}
		srv := c.server()
		logger.Info("simfleet: metrics and control", "addr", ln.Addr().String())
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("simfleet: control endpoint", "err", err)
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			srv.Close()
		})
	}
	if *report > 0 {
		wg.Go(func() { c.report(ctx, *report, os.Stderr) })
	}
	// stdin is read until EOF; the reader is not joined (a blocked read
	// cannot be cancelled) and ends with the process.
	go c.commands(os.Stdin, os.Stdout, stop)
	wg.Wait()
	return runErr
}

// control carries out disconnect and reconnect commands.
type control struct {
	f        *fleet.Fleet
	fraction float64
}

// do runs one command line and returns what to print.
func (c *control) do(line string) (string, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", nil
	}
	frac := func(def float64) (float64, error) {
		if len(fields) < 2 {
			return def, nil
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || v < 0 || v > 1 {
			return 0, fmt.Errorf("%q is not a fraction in [0, 1]", fields[1])
		}
		return v, nil
	}
	switch fields[0] {
	case "disconnect":
		v, err := frac(c.fraction)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("disconnected %d nodes", len(c.f.Disconnect(v))), nil
	case "reconnect":
		v, err := frac(1)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("reconnected %d nodes", len(c.f.Reconnect(v))), nil
	case "status":
		b, err := json.Marshal(c.f.Stats())
		return string(b), err
	}
	return "", fmt.Errorf("unknown command %q (disconnect [fraction], reconnect [fraction], status, quit)", fields[0])
}

// commands reads command lines from r until EOF or quit.
func (c *control) commands(r io.Reader, w io.Writer, quit func()) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "quit" || line == "exit" {
			quit()
			return
		}
		out, err := c.do(line)
		switch {
		case err != nil:
			fmt.Fprintln(w, "error:", err)
		case out != "":
			fmt.Fprintln(w, out)
		}
	}
}

// server returns the metrics and control endpoints.
func (c *control) server() *http.Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c.f.Collectors()...)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { c.reply(w, "status") })
	for _, cmd := range []string{"disconnect", "reconnect"} {
		mux.HandleFunc("POST /"+cmd, func(w http.ResponseWriter, r *http.Request) {
			line := cmd
			if v := r.URL.Query().Get("fraction"); v != "" {
				line += " " + v
			}
			c.reply(w, line)
		})
	}
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

func (c *control) reply(w http.ResponseWriter, line string) {
	out, err := c.do(line)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprintln(w, out)
}

// report writes a status line every interval until ctx ends.
func (c *control) report(ctx context.Context, interval time.Duration, w io.Writer) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last, lastAt := c.f.Stats(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, now := c.f.Stats(), time.Now()
		el := now.Sub(lastAt).Seconds()
		fmt.Fprintf(w, "simfleet: %d/%d connected, %d ready; %.1f heartbeats/s (mean TTL %v); %.1f update calls/s; "+
			"%d allocs running; %.1f watch answers/s (%.1f acted on); %d errors\n",
			s.Connected, s.Nodes, s.Ready, float64(s.Heartbeats-last.Heartbeats)/el, s.MeanTTL().Round(time.Millisecond),
			float64(s.AllocUpdateCalls-last.AllocUpdateCalls)/el, s.AllocsRunning,
			float64(s.WatchAnswers-last.WatchAnswers)/el, float64(s.WatchChanged-last.WatchChanged)/el, s.ErrorCount())
		last, lastAt = s, now
	}
}
