package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// rescheduleExitDiffers is `ordo debug reschedule`'s exit code when the
// re-run does not reproduce the recorded plan.
const rescheduleExitDiffers = 2

func newDebugCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "debug",
		Short: "Explain what the cluster decided",
	}
	cmd.AddCommand(newDebugRescheduleCommand(g))
	return cmd
}

func newDebugRescheduleCommand(g *globals) *cobra.Command {
	var (
		evalID string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "reschedule -eval <id>",
		Short: "Re-run a past evaluation on the state it saw and diff the plans",
		Long: `Re-run the scheduling decision of an evaluation on the state the cluster
held at the eval's snapshot index, and show the recomputed plan next to the
plan the log recorded: placements per task group and node, stops and updates
with their descriptions, the deployment, follow-up evals and the blocked
eval, then the differences. Nothing is written to the log: the server
rebuilds the state into a scratch store.

The id may be a unique prefix. Exit code 0 when the re-run reproduces the
recorded plan, 2 when it differs, 1 on error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && evalID == "" {
				evalID = args[0]
			}
			if evalID == "" {
				return fmt.Errorf("-eval <id> is required")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.Get(cmd.Context(), api.Pathf("/v1/debug/reschedule/%s", evalID), nil, &raw); err != nil {
				return fmt.Errorf("re-run evaluation %q: %w", evalID, err)
			}
			var res rerun.Result
			if err := json.Unmarshal(raw, &res); err != nil {
				return fmt.Errorf("re-run evaluation %q: decode: %w", evalID, err)
			}
			if asJSON {
				err = printJSON(cmd.OutOrStdout(), raw)
			} else {
				err = printReschedule(cmd.OutOrStdout(), &res)
			}
			if err != nil {
				return err
			}
			if !res.Equal {
				return &exitError{code: rescheduleExitDiffers}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&evalID, "eval", "", "the evaluation to re-run: id or unique prefix")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	return cmd
}

// printReschedule writes the recorded and recomputed plans side by side,
// then the diff.
func printReschedule(w io.Writer, res *rerun.Result) error {
	rec, re := res.Recorded, res.Recomputed
	if rec == nil {
		rec = &scheduler.Plan{}
	}
	if re == nil {
		re = &scheduler.Plan{}
	}
	e := res.Eval
	verdict := "the re-run reproduces the recorded plan"
	if !res.Equal {
		verdict = fmt.Sprintf("the re-run differs from the recorded plan (%d differences)", len(res.Diff))
	}
	if err := printPairs(w, []pair{
		{"Eval ID", res.EvalID},
		{"Job", e.Namespace + "/" + e.JobID},
		{"Type", e.Type},
		{"Triggered By", e.TriggeredBy},
		{"Snapshot Index", fmt.Sprint(res.SnapshotIndex)},
		{"Result", verdict},
	}); err != nil {
		return err
	}
	node := func(id string) string {
		if id == "" {
			return "-"
		}
		if name := res.Nodes[id]; name != "" && name != id {
			return shortID(id) + " (" + name + ")"
		}
		return shortID(id)
	}

	section(w, "Placements (task group, node)")
	type group struct{ tg, node string }
	byGroup := func(p *scheduler.Plan) map[group][]string {
		m := map[group][]string{}
		for _, a := range p.Placements {
			k := group{a.TaskGroup, a.NodeID}
			m[k] = append(m[k], a.Name)
		}
		return m
	}
	rg, cg := byGroup(rec), byGroup(re)
	keys := slices.Collect(maps.Keys(rg))
	for k := range cg {
		if _, ok := rg[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b group) int { return strings.Compare(a.tg+"\x00"+a.node, b.tg+"\x00"+b.node) })
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{k.tg, node(k.node), names(rg[k]), names(cg[k]), mark(names(rg[k]) != names(cg[k]))})
	}
	if err := sideTable(w, []string{"Task Group", "Node", "Recorded", "Recomputed", ""}, rows, "No placements"); err != nil {
		return err
	}

	for _, part := range []struct {
		title    string
		rec, re  []events.AllocDesiredUpdate
		describe func(events.AllocDesiredUpdate) string
	}{
		{"Stops", rec.Stops, re.Stops, stopText},
		{"Updates", rec.Updates, re.Updates, updateText},
	} {
		section(w, part.title)
		recBy, reBy := map[string]string{}, map[string]string{}
		var ids []string
		for _, u := range part.rec {
			recBy[u.ID] = part.describe(u)
			ids = append(ids, u.ID)
		}
		for _, u := range part.re {
			if _, ok := recBy[u.ID]; !ok {
				ids = append(ids, u.ID)
			}
			reBy[u.ID] = part.describe(u)
		}
		rows := make([][]string, 0, len(ids))
		for _, id := range ids {
			a := res.Allocs[id]
			rows = append(rows, []string{shortID(id), orDash(a.Name), node(a.NodeID), orDash(recBy[id]), orDash(reBy[id]), mark(recBy[id] != reBy[id])})
		}
		if err := sideTable(w, []string{"Alloc ID", "Name", "Node", "Recorded", "Recomputed", ""}, rows, "None"); err != nil {
			return err
		}
	}

	section(w, "Deployment, follow-up and blocked evals")
	rows = nil
	if rec.Deployment != nil || re.Deployment != nil {
		r, c := deploymentText(rec.Deployment), deploymentText(re.Deployment)
		rows = append(rows, []string{"deployment", r, c, mark(r != c)})
	}
	recFU, reFU := map[string]string{}, map[string]string{}
	var fuIDs []string
	for _, f := range rec.FollowUps {
		recFU[f.ID] = followUpText(f)
		fuIDs = append(fuIDs, f.ID)
	}
	for _, f := range re.FollowUps {
		if _, ok := recFU[f.ID]; !ok {
			fuIDs = append(fuIDs, f.ID)
		}
		reFU[f.ID] = followUpText(f)
	}
	for _, id := range fuIDs {
		rows = append(rows, []string{"follow-up " + shortID(id), orDash(recFU[id]), orDash(reFU[id]), mark(recFU[id] != reFU[id])})
	}
	if rec.CreateBlockedEval || re.CreateBlockedEval {
		r, c := blockedText(rec), blockedText(re)
		rows = append(rows, []string{"blocked eval", r, c, mark(r != c)})
	}
	for _, tg := range groupKeys(rec, re) {
		r, c := queuedText(rec, tg), queuedText(re, tg)
		rows = append(rows, []string{"queued/failed " + tg, r, c, mark(r != c)})
	}
	if err := sideTable(w, []string{"Item", "Recorded", "Recomputed", ""}, rows, "None"); err != nil {
		return err
	}

	section(w, "Diff")
	if len(res.Diff) == 0 {
		fmt.Fprintln(w, "None: the recomputed plan equals the recorded one")
	}
	for _, c := range res.Diff {
		fmt.Fprintln(w, c.String())
	}
	if res.Trigger != nil {
		section(w, fmt.Sprintf("Triggered by (committed with the eval at %d; not re-run)", res.Trigger.Index))
		for _, l := range rerun.TriggerLines(res.Trigger) {
			fmt.Fprintln(w, l)
		}
	}
	if len(res.EarlierAttempts) > 0 {
		section(w, "Earlier attempts (refused in part by the plan applier; not re-run)")
		for _, c := range res.EarlierAttempts {
			fmt.Fprintf(w, "committed at %d: %d placements, %d stops/updates, %d evals\n", c.Index, len(c.Placements), len(c.Updates), len(c.Evals))
		}
	}
	return nil
}

func section(w io.Writer, title string) { fmt.Fprintf(w, "\n%s\n", title) }

func sideTable(w io.Writer, header []string, rows [][]string, empty string) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	return printTable(w, header, rows)
}

// mark flags a row whose sides differ.
func mark(differs bool) string {
	if differs {
		return "<> differs"
	}
	return ""
}

// names lists placements' names, or their count when there are many.
func names(list []string) string {
	switch {
	case len(list) == 0:
		return "-"
	case len(list) > 4:
		return fmt.Sprintf("%d allocs", len(list))
	}
	return strings.Join(list, " ")
}

func stopText(u events.AllocDesiredUpdate) string {
	s := u.DesiredStatus + ": " + u.DesiredDescription
	if u.ClientStatus != "" {
		s += " (client " + u.ClientStatus + ")"
	}
	return s
}

func updateText(u events.AllocDesiredUpdate) string {
	var parts []string
	if u.DesiredStatus != "" {
		parts = append(parts, "desired "+u.DesiredStatus)
	}
	if u.ClientStatus != "" {
		parts = append(parts, "client "+u.ClientStatus)
	}
	if u.FollowupEvalID != "" {
		parts = append(parts, "follow-up "+shortID(u.FollowupEvalID))
	}
	if u.DesiredDescription != "" {
		parts = append(parts, u.DesiredDescription)
	}
	return strings.Join(parts, ", ")
}

func deploymentText(d *events.Deployment) string {
	if d == nil {
		return "-"
	}
	return fmt.Sprintf("%s v%d %s", shortID(d.ID), d.JobVersion, d.Status)
}

func followUpText(e events.Evaluation) string {
	s := e.TriggeredBy
	if e.WaitUntil > 0 {
		s += " at " + time.Unix(0, e.WaitUntil).UTC().Format(time.RFC3339)
	}
	return s
}

func blockedText(p *scheduler.Plan) string {
	if !p.CreateBlockedEval {
		return "-"
	}
	classes := slices.Sorted(maps.Keys(p.ClassEligibility))
	for i, c := range classes {
		classes[i] = fmt.Sprintf("%s=%v", c, p.ClassEligibility[c])
	}
	s := "yes"
	if len(classes) > 0 {
		s += " (" + strings.Join(classes, " ") + ")"
	}
	if p.EscapedComputedClass {
		s += " escaped"
	}
	return s
}

// groupKeys lists the task groups either plan queues or fails.
func groupKeys(ps ...*scheduler.Plan) []string {
	set := map[string]bool{}
	for _, p := range ps {
		for tg := range p.QueuedAllocations {
			set[tg] = true
		}
		for tg := range p.FailedTGAllocs {
			set[tg] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func queuedText(p *scheduler.Plan, tg string) string {
	s := fmt.Sprintf("%d queued", p.QueuedAllocations[tg])
	if m := p.FailedTGAllocs[tg]; m != nil {
		s += fmt.Sprintf(", failed: %d evaluated %d filtered %d exhausted", m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted)
		if len(m.DimensionExhausted) > 0 {
			dims := slices.Sorted(maps.Keys(m.DimensionExhausted))
			for i, d := range dims {
				dims[i] = fmt.Sprintf("%s=%d", d, m.DimensionExhausted[d])
			}
			s += " (" + strings.Join(dims, " ") + ")"
		}
	}
	return s
}
