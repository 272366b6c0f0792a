package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// Exit codes of `job plan`, as Nomad's: 0 when nothing would change, 1
// when allocations would be created or destroyed, 255 on error.
const (
	planExitChanges = 1
	planExitError   = 255
)

// exitError ends a command with an exit code other than 1; a nil err
// prints no message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// cliPlanFieldDiff, cliPlanObjectDiff, … are the diff of a plan response.
type cliPlanFieldDiff struct{ Type, Name, Old, New string }

type cliPlanObjectDiff struct {
	Type, Name string
	Fields     []cliPlanFieldDiff
	Objects    []cliPlanObjectDiff
}

type cliPlanTaskDiff struct {
	Type, Name string
	Fields     []cliPlanFieldDiff
	Objects    []cliPlanObjectDiff
}

type cliPlanGroupDiff struct {
	Type, Name string
	Fields     []cliPlanFieldDiff
	Objects    []cliPlanObjectDiff
	Tasks      []cliPlanTaskDiff
}

// cliPlan is the answer of PUT /v1/job/<id>/plan.
type cliPlan struct {
	Index       uint64
	Annotations *struct {
		DesiredTGUpdates map[string]map[string]uint64
	}
	FailedTGAllocs map[string]*struct {
		NodesEvaluated, NodesFiltered, NodesExhausted, CoalescedFailures int
		ConstraintFiltered, DimensionExhausted, ClassExhausted           map[string]int
	}
	CreatedEvals []struct{ ID, Status string }
	Diff         *struct {
		Type       string
		ID         string
		Fields     []cliPlanFieldDiff
		Objects    []cliPlanObjectDiff
		TaskGroups []cliPlanGroupDiff
	}
	NextPeriodicLaunch time.Time
	Warnings           string
}

// changes reports whether the plan creates or destroys allocations.
func (p *cliPlan) changes() bool {
	if p.Annotations == nil {
		return false
	}
	for _, u := range p.Annotations.DesiredTGUpdates {
		if u["Place"]+u["Stop"]+u["Migrate"]+u["DestructiveUpdate"]+u["Canary"] > 0 {
			return true
		}
	}
	return false
}

func newJobPlanCommand(g *globals) *cobra.Command {
	var diff, verbose bool
	cmd := &cobra.Command{
		Use:   "plan [flags] <file.hcl|file.json>",
		Short: "Dry-run a job: what registering it would change",
		Long: `Dry-run a job: the scheduler computes what registering the jobspec would do
against the current state, and nothing is written.

Prints, per task group, the allocations that would be created, stopped,
updated in place or replaced, the placements that would fail, and (with
-diff, the default) what changed in the job. Exits 0 when no allocations
would be created or destroyed, 1 when some would, 255 on error.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{planExitError, fmt.Errorf("this command takes one argument: <file>")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := runPlan(cmd, g, args[0], diff)
			if err != nil {
				return &exitError{planExitError, err}
			}
			if err := printPlan(cmd.OutOrStdout(), plan, args[0], verbose); err != nil {
				return &exitError{planExitError, err}
			}
			if plan.changes() {
				return &exitError{code: planExitChanges}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&diff, "diff", true, "show what changed in the job")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "show every field of added task groups and tasks")
	return cmd
}

func runPlan(cmd *cobra.Command, g *globals, path string, diff bool) (*cliPlan, error) {
	job, err := readJobspec(path)
	if err != nil {
		return nil, err
	}
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" && cmd.Flags().Changed("namespace") {
		job.Namespace = ns
	}
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	var plan cliPlan
	body := map[string]any{"Job": job, "Diff": diff}
	if err := c.Put(cmd.Context(), api.Pathf("/v1/job/%s/plan", job.ID), body, &plan); err != nil {
		return nil, fmt.Errorf("plan job %q: %w", job.ID, err)
	}
	return &plan, nil
}

// diffMark is how Nomad marks a diff type.
func diffMark(typ string) string {
	switch typ {
	case "Added":
		return "+"
	case "Deleted":
		return "-"
	case "Edited":
		return "+/-"
	}
	return ""
}

// planUpdates words a group's annotations: "1 create, 2 in-place update".
func planUpdates(u map[string]uint64) string {
	var parts []string
	for _, k := range []struct{ key, word string }{
		{"Place", "create"}, {"Stop", "destroy"}, {"Migrate", "migrate"}, {"InPlaceUpdate", "in-place update"},
		{"DestructiveUpdate", "create/destroy update"}, {"Canary", "canary"}, {"Ignore", "ignore"},
	} {
		if n := u[k.key]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.word))
		}
	}
	return strings.Join(parts, ", ")
}

func printFields(w io.Writer, indent string, fields []cliPlanFieldDiff, objects []cliPlanObjectDiff) {
	for _, f := range fields {
		if indent == "" && planBookkeeping[f.Name] {
			continue
		}
		switch f.Type {
		case "Added":
			fmt.Fprintf(w, "%s+ %s: %q\n", indent, f.Name, f.New)
		case "Deleted":
			fmt.Fprintf(w, "%s- %s: %q\n", indent, f.Name, f.Old)
		default:
			fmt.Fprintf(w, "%s+/- %s: %q => %q\n", indent, f.Name, f.Old, f.New)
		}
	}
	for _, o := range objects {
		fmt.Fprintf(w, "%s%s %s {\n", indent, diffMark(o.Type), o.Name)
		printFields(w, indent+"  ", o.Fields, o.Objects)
		fmt.Fprintf(w, "%s}\n", indent)
	}
}

// planBookkeeping are the job fields the servers keep rather than the
// user writes: a plan's diff leaves them out, as Nomad's does (registering
// again marks a stable version unstable, which says nothing about the
// change).
var planBookkeeping = map[string]bool{
	"Stable": true, "Status": true, "StatusDescription": true, "Version": true, "SubmitTime": true,
	"CreateIndex": true, "ModifyIndex": true, "JobModifyIndex": true,
}

// printPlan writes the plan as Nomad's `job plan` does.
func printPlan(w io.Writer, p *cliPlan, path string, verbose bool) error {
	var updates map[string]map[string]uint64
	if p.Annotations != nil {
		updates = p.Annotations.DesiredTGUpdates
	}
	if d := p.Diff; d != nil {
		fmt.Fprintf(w, "%s Job: %q\n", diffMark(d.Type), d.ID)
		if d.Type != "Added" || verbose {
			printFields(w, "", d.Fields, d.Objects)
		}
		for _, tg := range d.TaskGroups {
			line := fmt.Sprintf("%s Task Group: %q", diffMark(tg.Type), tg.Name)
			if s := planUpdates(updates[tg.Name]); s != "" {
				line += " (" + s + ")"
			}
			fmt.Fprintln(w, strings.TrimLeft(line, " "))
			if tg.Type != "Added" || verbose {
				printFields(w, "  ", tg.Fields, tg.Objects)
			}
			for _, t := range tg.Tasks {
				if t.Type == "None" {
					continue
				}
				fmt.Fprintf(w, "  %s Task: %q\n", diffMark(t.Type), t.Name)
				if t.Type != "Added" || verbose {
					printFields(w, "    ", t.Fields, t.Objects)
				}
			}
		}
		fmt.Fprintln(w)
	} else {
		for _, tg := range slices.Sorted(maps.Keys(updates)) {
			fmt.Fprintf(w, "Task Group: %q (%s)\n", tg, orNone(planUpdates(updates[tg])))
		}
		if len(updates) > 0 {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w, "Scheduler dry-run:")
	if !p.NextPeriodicLaunch.IsZero() {
		fmt.Fprintf(w, "- Periodic job: next launch at %s\n", p.NextPeriodicLaunch.UTC().Format(time.RFC3339))
	}
	if len(p.FailedTGAllocs) == 0 {
		fmt.Fprintln(w, "- All tasks successfully allocated.")
	} else {
		fmt.Fprintln(w, "- WARNING: Failed to place all allocations.")
		for _, tg := range slices.Sorted(maps.Keys(p.FailedTGAllocs)) {
			m := p.FailedTGAllocs[tg]
			fmt.Fprintf(w, "  Task Group %q (failed to place %d allocation(s)):\n", tg, m.CoalescedFailures+1)
			if m.NodesEvaluated == 0 {
				fmt.Fprintln(w, "    * No nodes were eligible for evaluation")
			}
			for _, c := range slices.Sorted(maps.Keys(m.ConstraintFiltered)) {
				fmt.Fprintf(w, "    * Constraint %q: %d nodes excluded by filter\n", c, m.ConstraintFiltered[c])
			}
			if m.NodesExhausted > 0 {
				fmt.Fprintf(w, "    * Resources exhausted on %d nodes\n", m.NodesExhausted)
			}
			for _, dim := range slices.Sorted(maps.Keys(m.DimensionExhausted)) {
				fmt.Fprintf(w, "    * Dimension %q exhausted on %d nodes\n", dim, m.DimensionExhausted[dim])
			}
		}
		for _, e := range p.CreatedEvals {
			if e.Status == "blocked" {
				fmt.Fprintln(w, "  Evaluation would be blocked until capacity is available.")
				break
			}
		}
	}
	if p.Warnings != "" {
		fmt.Fprintf(w, "\nWarnings:\n%s\n", p.Warnings)
	}
	_, err := fmt.Fprintf(w, `
Job Modify Index: %d
To submit the job with version verification run:

ordo job run -check-index %d %s

When running the job with the check-index flag, the job will only be run if
the job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.
`, p.Index, p.Index, path)
	return err
}

func newJobPeriodicCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "periodic",
		Short: "Interact with periodic jobs",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "force <id>",
		Short: "Launch a periodic job now, even if it prohibits overlap",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var out api.PeriodicForceResponse
			q := jobQuery(cmd)
			if err := c.Call(cmd.Context(), "PUT", api.Pathf("/v1/job/%s/periodic/force", args[0]), q, nil, &out); err != nil {
				return fmt.Errorf("force periodic job %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Job %q launched %q at index %d\nEvaluation ID: %s\n",
				args[0], out.DispatchedJobID, out.Index, out.EvalID)
			return err
		},
	})
	return cmd
}
