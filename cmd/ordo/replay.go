package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/processors/jobplan"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// errReplayReadOnly is what every command a replay would append answers.
var errReplayReadOnly = errors.New("ordo: a replay is read-only: nothing is appended")

// readOnlyLog refuses every entry: the Proposer of a replay's pipeline.
type readOnlyLog struct{}

func (readOnlyLog) Append(context.Context, []byte) (any, uint64, error) {
	return nil, 0, &commands.ConflictError{Reason: errReplayReadOnly.Error()}
}

var _ commands.Proposer = readOnlyLog{}

func newReplayCommand() *cobra.Command {
	var (
		serve   string
		tempDir string
	)
	cmd := &cobra.Command{
		Use:   "replay [flags] FILE [-- <read command> [flags]]",
		Short: "Serve reads from an exported history file or a snapshot, with no cluster",
		Long: `Replay a history file written by 'ordo log export': rebuild every
projection from its events into a scratch store, serve the HTTP API over it
read-only on 127.0.0.1, and run the given ordo command against it:

  ordo replay incident.olog -- job status web
  ordo replay incident.olog -- node status
  ordo replay incident.olog -- alloc status 2LzVh
  ordo replay incident.olog -- log show -from 48000
  ordo replay incident.olog -- debug reschedule -eval 2LzW

Any read works, at the file's last index or, with -at-index or -at-time,
at any earlier one the file holds a state for; writes answer an error,
nothing is appended and no processor runs. The command's -address is set by the replay. The file is checked
whole (checksum, counts) before anything is answered.

A file exported from index 1, or with its base state (the default of
'ordo log export -from N'), shows the whole cluster as it stood at the
file's last index. A file exported with -state=false from an index after 1
holds no earlier state: reads show only what the slice's own events build.

A snapshot file written by 'ordo operator snapshot save' replays too: its
state is loaded as saved (projections saved at another version are rebuilt
from its archive), and reads at an earlier index replay its archive.

With no command, the replay prints the file's header; with -serve ADDR it
serves the API on ADDR until interrupted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 || len(args) == 0 {
				return fmt.Errorf("usage: ordo replay FILE [-- <read command>]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file, inner := args[0], args[1:]
			if err := checkReplayCommand(inner); err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			dir, err := os.MkdirTemp(tempDir, "ordo-replay-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			r, err := openReplay(file, dir)
			if err != nil {
				return err
			}
			defer r.close()
			h := r.stats.Header
			fmt.Fprintf(stderr, "==> Replaying %s: cluster %s, %d events at indexes %d–%d", file, h.ClusterID, r.stats.Events, h.FirstIndex, h.LastIndex)
			switch {
			case h.StateIndex > 0:
				fmt.Fprintf(stderr, " on the state at %d", h.StateIndex)
			case h.From > 1:
				fmt.Fprintf(stderr, " (no state before %d: reads show only what these events build)", h.From)
			}
			fmt.Fprintln(stderr, "; read-only")
			if len(inner) == 0 && serve == "" {
				if r.snapshot != nil {
					return printSnapshotHeader(cmd.OutOrStdout(), file, *r.snapshot, r.stats)
				}
				return printReplayHeader(cmd.OutOrStdout(), file, r.stats)
			}
			addr, stop, err := r.serve(serve)
			if err != nil {
				return err
			}
			defer stop()
			if len(inner) == 0 {
				fmt.Fprintf(stderr, "==> Serving the replay read-only on http://%s until interrupted\n", addr)
				ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer cancel()
				<-ctx.Done()
				return nil
			}
			root := newRootCommand(cmd.OutOrStdout(), stderr)
			root.SetArgs(append([]string{"--address=http://" + addr}, normalizeArgs(inner)...))
			return root.ExecuteContext(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&serve, "serve", "", "serve the replay's API on this address (host:port)")
	cmd.Flags().StringVar(&tempDir, "temp-dir", "", "where the scratch store goes (default the system temp dir)")
	return cmd
}

// checkReplayCommand refuses commands a replay cannot run.
func checkReplayCommand(inner []string) error {
	if len(inner) == 0 {
		return nil
	}
	switch inner[0] {
	case "agent", "replay":
		return fmt.Errorf("ordo replay runs read commands; %q is not one", inner[0])
	}
	for _, a := range inner {
		if a == "--" {
			break
		}
		if a == "-address" || a == "--address" || strings.HasPrefix(a, "-address=") || strings.HasPrefix(a, "--address=") {
			return fmt.Errorf("ordo replay sets -address itself: leave it out of the command")
		}
	}
	return nil
}

// replay is a history file loaded into a scratch store, ready to serve.
type replay struct {
	file  string
	dir   string
	store *kv.Store
	fsm   *fsm.FSM
	stats export.LoadStats
	// snapshot is the file's summary when it is a snapshot file
	// (replaysnapshot.go) rather than a history file.
	snapshot *snapshots.Summary
}

// openReplay loads file into a store under dir.
func openReplay(file, dir string) (*replay, error) {
	batchGC()
	store, err := kv.Open(filepath.Join(dir, "state"), kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	r := &replay{file: file, dir: dir, store: store}
	snap, err := isSnapshotFile(file)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	if snap {
		if err := openSnapshotReplay(r); err != nil { // replaysnapshot.go
			if r.fsm != nil {
				r.fsm.Close()
			}
			store.Close()
			return nil, err
		}
		return r, nil
	}
	if r.stats, err = export.Load(file, store, all.Projections()); err != nil {
		store.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if r.fsm, err = fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: quiet, Version: agent.Version}); err != nil {
		store.Close()
		return nil, err
	}
	return r, nil
}

func (r *replay) close() {
	r.fsm.Close()
	r.store.Close()
}

// serve starts the read-only API on addr (127.0.0.1:0 when empty) and
// returns its address and a function that stops it.
func (r *replay) serve(addr string) (string, func(), error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	pipeline, err := commands.NewPipeline(commands.PipelineConfig{Log: readOnlyLog{}, Store: r.store, Applied: r.fsm.Applied, Logger: quiet})
	if err != nil {
		return "", nil, err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	h := r.stats.Header
	scratch := filepath.Join(r.dir, "scratch")
	api, err := httpapi.New(httpapi.Config{
		FSM: r.fsm, Pipeline: pipeline, Logger: quiet,
		ReadOnly: "a replay of " + filepath.Base(r.file),
		Self: httpapi.Self{ID: "replay", Name: "replay of " + filepath.Base(r.file), HTTPAddr: ln.Addr().String(),
			Version: agent.Version, Config: map[string]any{"ReplayOf": r.file, "Header": h}},
		JobPlanner:  jobplan.Planner{Now: time.Now},
		Rescheduler: rerun.ForAPI(scratch, 1),
		// The base state is rebuilt from the file's own archive, so a
		// re-export of a slice carries the state only when the file
		// started at 1.
		Exporter: &export.API{Server: "replay", Version: agent.Version, ClusterID: h.ClusterID,
			ClusterIDSource: h.ClusterIDSource, Dir: r.dir, Clock: clock.System{}, NoState: h.From > 1},
	})
	if err != nil {
		ln.Close()
		return "", nil, err
	}
	hist, err := r.history()
	if err != nil {
		ln.Close()
		api.Close()
		return "", nil, err
	}
	srv := httplimit.NewServer(api.WithHistory(hist), httplimit.DefaultConfig()) // an agent's default timeouts
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		hist.Close()
		api.Close()
	}
	return ln.Addr().String(), stop, nil
}

// history serves the replay's reads at_index and at_time
// (history/timetravel over the replay's store): its versions store is
// seeded at the file's last index and backfilled from the file's events
// before history returns, from the file's base state when it has one;
// reads of an index the file holds no state for are refused.
func (r *replay) history() (*replayHistory, error) {
	h := r.stats.Header
	first := max(h.From, 1)
	cfg := timetravel.Config{DataDir: r.dir, FSM: r.fsm, Projections: all.Projections(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var base *kv.Store
	if h.StateIndex > 0 {
		first = h.StateIndex
		var err error
		if base, err = kv.Open(filepath.Join(r.dir, "base"), kv.DefaultConfig()); err != nil {
			return nil, err
		}
		if _, err = export.LoadState(r.file, base); err != nil {
			base.Close()
			return nil, fmt.Errorf("replay: base state: %w", err)
		}
		cfg.Base, cfg.BaseIndex = base, h.StateIndex
	}
	tt, err := timetravel.New(cfg)
	if err != nil {
		if base != nil {
			base.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rh := &replayHistory{TimeTravel: tt, first: first, base: base, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rh.done)
		_ = tt.Run(ctx)
	}()
	if err := tt.WaitBackfilled(ctx); err != nil {
		rh.Close()
		return nil, fmt.Errorf("replay: index the file's history: %w", err)
	}
	return rh, nil
}

// replayHistory is time travel over a replay, refusing indexes before the
// first one the file holds a state for.
type replayHistory struct {
	*timetravel.TimeTravel
	first  uint64
	base   *kv.Store // the file's base state, nil when it has none
	cancel context.CancelFunc
	done   chan struct{} // closed when the backfill's Run returns
}

// Close stops the backfill and closes the versions store and base state.
func (h *replayHistory) Close() {
	h.cancel()
	<-h.done
	h.TimeTravel.Close()
	if h.base != nil {
		h.base.Close()
	}
}

var _ httpapi.History = (*replayHistory)(nil)

func (h *replayHistory) View(ctx context.Context, index uint64) (projections.View, func(), error) {
	if index < h.first {
		return projections.View{}, nil, commands.Invalid("at_index",
			"%d is before the replayed file's first state, at index %d: the file holds nothing earlier", index, h.first)
	}
	return h.TimeTravel.View(ctx, index)
}

// printReplayHeader describes a loaded history file.
func printReplayHeader(w io.Writer, file string, st export.LoadStats) error {
	h := st.Header
	state := "none (a replay shows the whole cluster only if the file starts at index 1)"
	if h.StateIndex > 0 {
		state = fmt.Sprintf("the projections at index %d (%d rows)", h.StateIndex, st.StateRows)
	} else if h.From <= 1 {
		state = "none needed (the file starts at index 1)"
	}
	to := "end"
	if h.To > 0 {
		to = fmt.Sprint(h.To)
	}
	return printPairs(w, []pair{
		{"File", file},
		{"Format Version", fmt.Sprint(h.FormatVersion)},
		{"Cluster ID", fmt.Sprintf("%s (%s)", h.ClusterID, h.ClusterIDSource)},
		{"Exported By", orDash(h.Server)},
		{"Created", h.Created.UTC().Format(time.RFC3339)},
		{"Range Asked", fmt.Sprintf("%d to %s", h.From, to)},
		{"Indexes", fmt.Sprintf("%d to %d", h.FirstIndex, h.LastIndex)},
		{"Events", fmt.Sprint(st.Events)},
		{"Base State", state},
		{"SHA-256", st.Checksum},
	})
}
