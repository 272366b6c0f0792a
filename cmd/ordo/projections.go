package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
)

// pollEvery is how often the CLI polls a running projection job.
const pollEvery = 200 * time.Millisecond

func newProjectionsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projections",
		Short: "List, rebuild and verify this server's projections",
		Long: `Projections are the read models each server derives from the event archive.
They are local to a server: these commands act on the server -address names
(or, with -offline, on a stopped server's data directory).`,
	}
	cmd.AddCommand(newProjectionsListCommand(g), newProjectionsRebuildCommand(g), newProjectionsVerifyCommand(g),
		newProjectionsCancelCommand(g))
	return cmd
}

// offlineFlags are the flags of a command that can work on a stopped
// server's data directory.
type offlineFlags struct {
	offline bool
	dataDir string
}

func (o *offlineFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.offline, "offline", false, "work on a stopped server's data directory instead of a running server")
	cmd.Flags().StringVar(&o.dataDir, "data-dir", "", "the stopped server's data directory (with -offline)")
}

func (o *offlineFlags) check() error {
	if o.offline && o.dataDir == "" {
		return errors.New("-offline needs -data-dir")
	}
	if !o.offline && o.dataDir != "" {
		return errors.New("-data-dir works with -offline only")
	}
	return nil
}

// open opens the stopped server's state store, its FSM (discarding a
// shadow a crash left) and a Rebuilder.
func (o *offlineFlags) open() (*fsm.Rebuilder, func(), error) {
	batchGC() // this process does nothing but the command
	dir := filepath.Join(o.dataDir, "state")
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("no state store in %s: %w", o.dataDir, err)
	}
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("%w (is the server still running? stop it first)", err)
	}
	f, err := fsm.New(store, fsm.Config{Projections: all.Projections(), AllowStale: true, Version: agent.Version})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Clock: clock.System{}, ScratchDir: filepath.Join(o.dataDir, "scratch"),
		Parallelism: -1}) // the server is stopped: every core
	return rb, func() {
		rb.Close()
		f.Close()
		store.Close()
	}, nil
}

func newProjectionsListCommand(g *globals) *cobra.Command {
	var asJSON, checksums bool
	var off offlineFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the projections: version (stored/code), applied index, state, checksum",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := off.check(); err != nil {
				return err
			}
			var list httpapi.ProjectionList
			if off.offline {
				rb, closeAll, err := off.open()
				if err != nil {
					return err
				}
				defer closeAll()
				if list.Projections, err = rb.Status(checksums); err != nil {
					return err
				}
			} else {
				c, err := g.client()
				if err != nil {
					return err
				}
				q := url.Values{}
				q.Set("checksum", strconv.FormatBool(checksums))
				if err := c.Get(cmd.Context(), "/v1/operator/projections", q, &list); err != nil {
					return fmt.Errorf("list projections: %w", err)
				}
			}
			if asJSON {
				return writeIndented(cmd.OutOrStdout(), list)
			}
			if err := printProjections(cmd.OutOrStdout(), list.Projections); err != nil {
				return err
			}
			if list.Job != nil {
				fmt.Fprintln(cmd.OutOrStdout(), jobLine(*list.Job))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.Flags().BoolVar(&checksums, "checksum", true, "compute each projection's checksum (reads every row)")
	off.add(cmd)
	return cmd
}

// jobLine says, under the list, what the running or last job is doing or
// did.
func jobLine(j fsm.Job) string {
	line := fmt.Sprintf("\nJob %d: %s of %s, %s", j.ID, j.Kind, strings.Join(j.Projections, ", "), j.State)
	if j.State == fsm.JobRunning {
		line += fmt.Sprintf(" (%s, %d of %d events, %s at once)", j.Phase, j.Events, j.Target, plural(j.Parallelism, "projection"))
	}
	if j.Error != "" && j.State != fsm.JobCancelled {
		line += ": " + j.Error
	}
	return line
}

// printProjections writes the table of `ordo operator projections list`.
func printProjections(w io.Writer, list []fsm.ProjectionStatus) error {
	rows := make([][]string, len(list))
	for i, p := range list {
		version := strconv.Itoa(p.Version)
		if p.StoredVersion != p.Version {
			version = fmt.Sprintf("%d (stored %d)", p.Version, p.StoredVersion)
		}
		state := p.State
		if p.State == fsm.StateRebuilding {
			state = fmt.Sprintf("rebuilding %.0f%%", 100*p.Progress)
		}
		sum := p.Checksum
		if len(sum) > 16 {
			sum = sum[:16]
		}
		rows[i] = []string{p.Name, version, strconv.FormatUint(p.Applied, 10), strconv.FormatUint(p.ModifyIndex, 10), state, sum}
	}
	return printTable(w, []string{"Name", "Version", "Applied", "Modify Index", "State", "Checksum"}, rows)
}

// parallelUsage describes the -parallel flag of the online rebuild and
// verify.
const parallelUsage = "projections replayed at once while the server applies entries (0: the server's default, which leaves it a core; -1: all at once, fastest); an idle server and offline jobs use every core"

func newProjectionsRebuildCommand(g *globals) *cobra.Command {
	var detach, quiet bool
	var parallel int
	var off offlineFlags
	cmd := &cobra.Command{
		Use:   "rebuild [names...]",
		Short: "Rebuild projections from the archive (all when none is named)",
		Long: `Rebuild rebuilds the named projections (all when none is named) from the
event archive. Online, the server builds them into a shadow keyspace while
the old ones keep serving, catches up with new writes, then switches in one
atomic batch; a progress bar shows events/s and the ETA. While the server
applies entries it replays one projection fewer at once than the server
has cores (by default), so the cluster keeps its pace; an idle server
replays them all at once, and so does -parallel -1.
With -offline -data-dir, it rebuilds a stopped server's projections (and
any that a version change made stale) in place of the server.`,
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := off.check(); err != nil {
				return err
			}
			if off.offline {
				return offlineJob(cmd, &off, fsm.JobRebuild, names, quiet)
			}
			return onlineJob(cmd, g, fsm.JobRebuild, names, parallel, detach, quiet)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "return once the server has started the rebuild")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "draw no progress bar")
	cmd.Flags().IntVar(&parallel, "parallel", 0, parallelUsage)
	off.add(cmd)
	return cmd
}

func newProjectionsVerifyCommand(g *globals) *cobra.Command {
	var quiet bool
	var parallel int
	var off offlineFlags
	cmd := &cobra.Command{
		Use:   "verify [names...]",
		Short: "Rebuild projections into scratch space and compare their checksums with the live ones",
		RunE: func(cmd *cobra.Command, names []string) error {
			if err := off.check(); err != nil {
				return err
			}
			if off.offline {
				return offlineJob(cmd, &off, fsm.JobVerify, names, quiet)
			}
			return onlineJob(cmd, g, fsm.JobVerify, names, parallel, false, quiet)
		},
	}
	cmd.Flags().BoolVar(&quiet, "quiet", false, "draw no progress bar")
	cmd.Flags().IntVar(&parallel, "parallel", 0, parallelUsage)
	off.add(cmd)
	return cmd
}

func newProjectionsCancelCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel",
		Short: "Cancel the server's running or queued projection rebuild or verify",
		Long: `Cancel stops the projection rebuild or verify the server runs (or has
queued). A rebuild's scratch store is deleted: the live projections stay
as they were, and a restart does not resume it. A rebuild already switching its
projections live may finish first. Follow the job with
` + "`ordo operator projections list`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var j fsm.Job
			if err := c.Call(cmd.Context(), "DELETE", "/v1/operator/projections/job", nil, nil, &j); err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancelling %s of %s (job %d, %s)\n", j.Kind, strings.Join(j.Projections, ", "), j.ID, j.State)
			return nil
		},
	}
}

// onlineJob starts a job on the server, then polls it, drawing its
// progress, until it ends.
func onlineJob(cmd *cobra.Command, g *globals, kind string, names []string, parallel int, detach, quiet bool) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	var j fsm.Job
	if err := c.Call(cmd.Context(), "POST", "/v1/operator/projections/"+kind, nil, httpapi.ProjectionJobRequest{Projections: names, Parallelism: parallel}, &j); err != nil {
		return fmt.Errorf("start %s: %w", kind, err)
	}
	out := cmd.OutOrStdout()
	if detach {
		fmt.Fprintf(out, "%s of %s started (job %d); follow it with `ordo operator projections list`\n", kind, strings.Join(j.Projections, ", "), j.ID)
		return nil
	}
	poll := func(ctx context.Context) (fsm.Job, error) {
		var cur fsm.Job
		err := c.Get(ctx, "/v1/operator/projections/job", nil, &cur)
		if err == nil && cur.ID != j.ID {
			err = fmt.Errorf("the server runs job %d, not %d (did it restart?)", cur.ID, j.ID)
		}
		return cur, err
	}
	j, err = follow(cmd.Context(), cmd.ErrOrStderr(), j, poll, progressStyleFor(cmd.ErrOrStderr(), quiet))
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopped following job %d; the server goes on with the %s (`ordo operator projections cancel` stops it)", j.ID, kind)
	}
	if err != nil {
		return err
	}
	return report(out, j)
}

// offlineJob runs a job on a stopped server's store, drawing its progress.
func offlineJob(cmd *cobra.Command, off *offlineFlags, kind string, names []string, quiet bool) error {
	rb, closeAll, err := off.open()
	if err != nil {
		return err
	}
	defer closeAll()
	if kind == fsm.JobRebuild && len(names) > 0 {
		// Stale projections cannot serve: rebuild them too.
		for _, s := range staleNames(rb) {
			if !contains(names, s) {
				names = append(names, s)
			}
		}
	}
	done := make(chan error, 1)
	go func() { // joined below
		_, err := rb.Do(cmd.Context(), kind, names)
		done <- err
	}()
	poll := func(context.Context) (fsm.Job, error) {
		j, _ := rb.Job()
		return j, nil
	}
	j, _ := rb.Job()
	j, ferr := follow(cmd.Context(), cmd.ErrOrStderr(), j, poll, progressStyleFor(cmd.ErrOrStderr(), quiet))
	if err := <-done; err != nil && ferr == nil && !j.Ended() {
		ferr = err
	}
	if ferr != nil {
		return ferr
	}
	return report(cmd.OutOrStdout(), j)
}

func staleNames(rb *fsm.Rebuilder) []string {
	st, err := rb.Status(false)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range st {
		if p.State == fsm.StateStale {
			out = append(out, p.Name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// follow polls a job until it ends, showing its progress on w in style
// (progress.go): a bar of the events replayed with their rate and the ETA
// on a terminal, a plain line now and then otherwise.
func follow(ctx context.Context, w io.Writer, j fsm.Job, poll func(context.Context) (fsm.Job, error), style progressStyle) (fsm.Job, error) {
	var bar *progressbar.ProgressBar
	var lastLine time.Time
	if style == progressBar {
		bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(fmt.Sprintf("%s %s", j.Kind, strings.Join(j.Projections, ","))),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("events"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(pollEvery/2),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if style == progressLines && j.Target > 0 && (j.Ended() || time.Since(lastLine) >= linesEvery) {
			lastLine = time.Now()
			phase := j.Phase
			if phase == "" {
				phase = j.State
			}
			fmt.Fprintf(w, "%s %s [%s]: %d/%d events\n", j.Kind, strings.Join(j.Projections, ","), phase, min(j.Events, j.Target), j.Target)
		}
		if bar != nil && j.Target > 0 {
			if int64(j.Target) != bar.GetMax64() {
				bar.ChangeMax64(int64(j.Target))
			}
			phase := j.Phase
			if phase == "" {
				phase = j.State
			}
			bar.Describe(fmt.Sprintf("%s %s [%s]", j.Kind, strings.Join(j.Projections, ","), phase))
			_ = bar.Set64(int64(min(j.Events, j.Target)))
		}
		if j.Ended() {
			if bar != nil {
				if j.State == fsm.JobDone && j.Target > 0 {
					_ = bar.Finish()
				}
				fmt.Fprintln(w)
			}
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-tick.C:
		}
		next, err := poll(ctx)
		if err != nil {
			return j, err
		}
		j = next
	}
}

// report prints a finished job: an error for a failed one, the checksums
// of a verify (an error when one differs), a summary of a rebuild.
func report(w io.Writer, j fsm.Job) error {
	switch j.State {
	case fsm.JobFailed:
		return fmt.Errorf("%s of %s failed: %s", j.Kind, strings.Join(j.Projections, ", "), j.Error)
	case fsm.JobCancelled:
		return fmt.Errorf("%s of %s cancelled: the live projections are as they were", j.Kind, strings.Join(j.Projections, ", "))
	}
	took := j.Finished.Sub(j.Started)
	switch j.Kind {
	case fsm.JobVerify:
		rows := make([][]string, len(j.Results))
		var bad []string
		for i, r := range j.Results {
			state := "ok"
			if !r.Match {
				state, bad = "DIFFERS", append(bad, r.Projection)
			}
			rows[i] = []string{r.Projection, r.Live[:16], r.Rebuilt[:16], state}
		}
		if err := printTable(w, []string{"Projection", "Live", "Rebuilt", "Result"}, rows); err != nil {
			return err
		}
		if len(bad) > 0 {
			return fmt.Errorf("projections differ from their rebuild: %s (repair with `ordo operator projections rebuild %s`)",
				strings.Join(bad, ", "), strings.Join(bad, " "))
		}
		fmt.Fprintf(w, "%d projections equal their rebuild from the archive through index %d (%s)\n", len(j.Results), j.Head, took.Round(time.Millisecond))
	default:
		rate := 0.0
		if s := took.Seconds(); s > 0 {
			rate = float64(j.Events) / s
		}
		fmt.Fprintf(w, "rebuilt %s: %d events through index %d in %s (%.0f events/s, %s at once); the switch held writes %s, reads %s\n",
			strings.Join(j.Projections, ", "), j.Events, j.Index, took.Round(time.Millisecond), rate, plural(j.Parallelism, "projection"),
			seconds(j.SwitchSeconds), seconds(j.ReadPauseSeconds))
	}
	return nil
}

// plural says n things: "1 projection", "3 projections".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// seconds renders s seconds to the microsecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(v)
}
