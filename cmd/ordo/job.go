package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// maxJobspec bounds a jobspec file read by `job run`.
const maxJobspec = 4 << 20

// cliJob is a job as GET /v1/job/<id> answers it (api.Job).
type cliJob = api.Job

func newJobCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Interact with jobs",
	}
	cmd.PersistentFlags().String("namespace", g.env("NAMESPACE"), "namespace of the job ($ORDO_NAMESPACE, $NOMAD_NAMESPACE; default \"default\")")
	cmd.AddCommand(newJobRunCommand(g), newJobStatusCommand(g), newJobStopCommand(g), newJobInspectCommand(g),
		newJobPlanCommand(g), newJobPeriodicCommand(g))
	cmd.AddCommand(jobVerbCommands(g)...) // jobverbs.go
	return cmd
}

// jobQuery returns the ?namespace= of the -namespace flag.
func jobQuery(cmd *cobra.Command) url.Values {
	q := url.Values{}
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		q.Set("namespace", ns)
	}
	return q
}

// readJobspec parses path locally: JSON (Nomad's API JSON) for *.json,
// HCL otherwise.
func readJobspec(path string) (*events.Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var job *events.Job
	if strings.EqualFold(filepath.Ext(path), ".json") {
		job, err = jobspec.ParseJSON(f, maxJobspec)
	} else {
		var src []byte
		if src, err = io.ReadAll(io.LimitReader(f, maxJobspec+1)); err == nil {
			if len(src) > maxJobspec {
				return nil, fmt.Errorf("%s is larger than %d bytes", path, maxJobspec)
			}
			job, err = jobspec.ParseHCL(filepath.Base(path), src)
		}
	}
	if ve, ok := errors.AsType[*commands.ValidationError](err); ok {
		return nil, fmt.Errorf("%s: %s: %s", path, ve.Field, ve.Reason)
	}
	return job, err
}

func newJobRunCommand(g *globals) *cobra.Command {
	var (
		detach      bool
		enforce     bool
		modifyIndex uint64
	)
	cmd := &cobra.Command{
		Use:   "run [flags] <file.hcl|file.json>",
		Short: "Register a job from a jobspec and follow its evaluation",
		Long: `Register a job from a jobspec and follow its evaluation.

The jobspec is parsed and validated locally (HCL, or Nomad's API JSON for a
.json file), then registered. Unless -detach is given, the evaluation is
followed until it finishes, printing each allocation it places, and then
the deployment it starts until that ends. When allocations could not be
placed, the reasons are printed (nodes filtered by which constraint,
resources exhausted) and the exit code is 2; a failed deployment exits 1.`,
		Args: oneArg("<file>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := readJobspec(args[0])
			if err != nil {
				return err
			}
			if ns, _ := cmd.Flags().GetString("namespace"); ns != "" && cmd.Flags().Changed("namespace") {
				job.Namespace = ns
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			body := map[string]any{"Job": job}
			if cmd.Flags().Changed("check-index") {
				enforce = true
			}
			if enforce {
				body["EnforceIndex"], body["JobModifyIndex"] = true, modifyIndex
			}
			var out api.JobRegisterResponse
			if err := c.Put(cmd.Context(), "/v1/jobs", body, &out); err != nil {
				return fmt.Errorf("register job %q: %w", job.ID, err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Job %q registered at index %d (job modify index %d)\n", job.ID, out.Index, out.JobModifyIndex)
			if out.EvalID == "" {
				_, err := fmt.Fprintln(w, "Job is periodic or parameterized: no evaluation was created")
				return err
			}
			fmt.Fprintf(w, "Evaluation ID: %s\n", out.EvalID)
			if detach {
				return nil
			}
			m := &evalMonitor{c: c, w: w, d: g.display(), tty: isTerminal(w)}
			return m.monitor(cmd.Context(), out.EvalID, out.Index, false)
		},
	}
	cmd.Flags().BoolVar(&detach, "detach", false, "print the evaluation id and return without following it")
	cmd.Flags().Uint64Var(&modifyIndex, "check-index", 0, "register only if the job's modify index is this (0: only if new)")
	return cmd
}

// monitorEval follows evaluation id from index, and the deployment it
// starts, as `job run` does (jobmonitor.go): placement lines, status
// changes, the reasons of a placement failure (exit code 2).
func monitorEval(ctx context.Context, c *api.Client, w io.Writer, id string, index uint64) error {
	m := &evalMonitor{c: c, w: w, d: display{now: time.Now()}, tty: isTerminal(w)}
	return m.monitor(ctx, id, index, false)
}

// resolveJob returns the id of the job idOrPrefix names: the job with that
// id, or the one job whose id starts with it.
func resolveJob(cmd *cobra.Command, c *api.Client, idOrPrefix string) (string, error) {
	q := jobQuery(cmd)
	var j api.JobListStub
	err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s", idOrPrefix), q, &j)
	if err == nil {
		return j.ID, nil
	}
	if !api.IsNotFound(err) {
		return "", fmt.Errorf("read job %q: %w", idOrPrefix, err)
	}
	q.Set("prefix", idOrPrefix)
	var list []api.JobListStub
	if err := c.Get(cmd.Context(), "/v1/jobs", q, &list); err != nil {
		return "", fmt.Errorf("list jobs: %w", err)
	}
	switch len(list) {
	case 0:
		return "", fmt.Errorf("no job with id or prefix %q", idOrPrefix)
	case 1:
		return list[0].ID, nil
	}
	ids := make([]string, len(list))
	for i, j := range list {
		ids[i] = j.ID
	}
	return "", fmt.Errorf("prefix %q matches several jobs: %s", idOrPrefix, strings.Join(ids, ", "))
}

func newJobStatusCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] [<id>]",
		Short: "List jobs, or show one with its summary, allocations and latest deployment",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			machine, err := out.active()
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if len(args) == 0 {
				if err := c.Get(cmd.Context(), "/v1/jobs", jobQuery(cmd), &raw); err != nil {
					return fmt.Errorf("list jobs: %w", err)
				}
				if machine {
					return out.write(w, raw)
				}
				var list []api.JobListStub
				if err := json.Unmarshal(raw, &list); err != nil {
					return fmt.Errorf("decode jobs: %w", err)
				}
				return printJobs(w, list)
			}
			id, err := resolveJob(cmd, c, args[0])
			if err != nil {
				return err
			}
			if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s", id), jobQuery(cmd), &raw); err != nil {
				return fmt.Errorf("read job %q: %w", id, err)
			}
			if machine {
				return out.write(w, raw)
			}
			var j cliJob
			if err := json.Unmarshal(raw, &j); err != nil {
				return fmt.Errorf("decode job %q: %w", id, err)
			}
			return showJob(cmd, c, w, g.display(), &j)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// printJobs writes the table of `ordo job status`.
func printJobs(w io.Writer, list []api.JobListStub) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No running jobs")
		return err
	}
	rows := make([][]string, len(list))
	for i, j := range list {
		rows[i] = []string{j.ID, j.Namespace, j.Type, strconv.Itoa(j.Priority), j.Status, submitTime(j.SubmitTime)}
	}
	return printTable(w, []string{"ID", "Namespace", "Type", "Priority", "Status", "Submit Date"}, rows)
}

func submitTime(ns int64) string {
	if ns == 0 {
		return "<none>"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

func newJobStopCommand(g *globals) *cobra.Command {
	var purge, noShutdownDelay bool
	cmd := &cobra.Command{
		Use:   "stop [flags] <id>",
		Short: "Stop a job (or, with -purge, remove it)",
		Long: `Stop a job: it is kept, marked stopped, and its allocations are stopped.
-purge removes it instead. -no-shutdown-delay stops its allocations without
waiting for their tasks' shutdown_delay.`,
		Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveJob(cmd, c, args[0])
			if err != nil {
				return err
			}
			q := jobQuery(cmd)
			q.Set("purge", strconv.FormatBool(purge))
			q.Set("no_shutdown_delay", strconv.FormatBool(noShutdownDelay))
			var out api.JobDeregisterResponse
			if err := c.Call(cmd.Context(), http.MethodDelete, api.Pathf("/v1/job/%s", id), q, nil, &out); err != nil {
				return fmt.Errorf("stop job %q: %w", id, err)
			}
			verb := "stopped"
			if purge {
				verb = "purged"
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Job %q %s at index %d\n", id, verb, out.Index)
			if out.EvalID != "" {
				_, err = fmt.Fprintf(w, "Evaluation ID: %s\n", out.EvalID)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "remove the job instead of keeping it stopped")
	cmd.Flags().BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "stop allocations without their tasks' shutdown delay")
	return cmd
}
