package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// cliEvalStub is an evaluation as lists and RelatedEvals show it.
type cliEvalStub struct {
	ID                string
	Priority          int
	Type              string
	TriggeredBy       string
	Namespace         string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// cliEval is an evaluation as GET /v1/evaluation/<id> answers it.
type cliEval struct {
	cliEvalStub
	WaitUntil         time.Time
	QueuedAllocations map[string]int
	FailedTGAllocs    map[string]*struct {
		NodesEvaluated, NodesFiltered, NodesExhausted int
		DimensionExhausted, ConstraintFiltered        map[string]int
	}
	RelatedEvals []cliEvalStub
}

func newEvalCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Interact with evaluations",
	}
	cmd.AddCommand(newEvalStatusCommand(g), newEvalListCommand(g), newEvalDeleteCommand(g)) // delete: evaldelete.go
	return cmd
}

func newEvalListCommand(g *globals) *cobra.Command {
	var (
		asJSON    bool
		namespace string
		filter    string
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List evaluations, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{"namespace": {namespace}}
			if filter != "" {
				q.Set("filter", filter)
			}
			return show(cmd, g, "/v1/evaluations", q, "list evaluations", asJSON, func(w io.Writer, list []cliEvalStub) error { return printEvalStubs(w, list, "No evaluations found") })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.Flags().StringVar(&namespace, "namespace", "default", "namespace to list, * for all")
	cmd.Flags().StringVar(&filter, "filter", "", `list only what this expression selects (Nomad's filter syntax: 'Status == "pending"')`)
	return cmd
}

func newEvalStatusCommand(g *globals) *cobra.Command {
	var asJSON, related bool
	cmd := &cobra.Command{
		Use:   "status [flags] <id>",
		Short: "Show an evaluation by id or unique id prefix",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var q url.Values
			if related {
				q = url.Values{"related": {"true"}}
			}
			return show(cmd, g, api.Pathf("/v1/evaluation/%s", args[0]), q, fmt.Sprintf("read evaluation %q", args[0]), asJSON, func(w io.Writer, e cliEval) error { return printEval(w, e, related) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.Flags().BoolVar(&related, "related", false, "show the next, previous and blocked evaluations (N17)")
	return cmd
}

// printEvalStubs writes a table of evaluations, ids in full (N16).
func printEvalStubs(w io.Writer, list []cliEvalStub, empty string) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	rows := make([][]string, len(list))
	for i, e := range list {
		rows[i] = []string{e.ID, strconv.Itoa(e.Priority), e.TriggeredBy, e.JobID, orDash(e.NodeID), e.Status}
	}
	return printTable(w, []string{"ID", "Priority", "Triggered By", "Job ID", "Node ID", "Status"}, rows)
}

// printEval writes the "Key = value" view of `ordo eval status`.
func printEval(w io.Writer, e cliEval, related bool) error {
	created := "<none>"
	if e.CreateTime > 0 {
		created = time.Unix(0, e.CreateTime).UTC().Format(time.RFC3339)
	}
	pairs := []pair{
		{"ID", e.ID},
		{"Create Time", created},
		{"Namespace", e.Namespace},
		{"Status", e.Status},
		{"Status Description", orNone(e.StatusDescription)},
		{"Type", e.Type},
		{"Triggered By", e.TriggeredBy},
		{"Job ID", e.JobID},
		{"Node ID", orNone(e.NodeID)},
		{"Deployment ID", orNone(e.DeploymentID)},
		{"Priority", strconv.Itoa(e.Priority)},
		{"Next Eval", orNone(e.NextEval)},
		{"Previous Eval", orNone(e.PreviousEval)},
		{"Blocked Eval", orNone(e.BlockedEval)},
	}
	if !e.WaitUntil.IsZero() {
		pairs = append(pairs, pair{"Wait Until", e.WaitUntil.UTC().Format(time.RFC3339)})
	}
	pairs = append(pairs, pair{"Create Index", strconv.FormatUint(e.CreateIndex, 10)}, pair{"Modify Index", strconv.FormatUint(e.ModifyIndex, 10)})
	if err := printPairs(w, pairs); err != nil {
		return err
	}
	if len(e.QueuedAllocations) > 0 {
		fmt.Fprintln(w, "\nQueued Allocations")
		var qp []pair
		for _, g := range slices.Sorted(maps.Keys(e.QueuedAllocations)) {
			qp = append(qp, pair{g, strconv.Itoa(e.QueuedAllocations[g])})
		}
		if err := printPairs(w, qp); err != nil {
			return err
		}
	}
	for _, g := range slices.Sorted(maps.Keys(e.FailedTGAllocs)) {
		m := e.FailedTGAllocs[g]
		if m == nil {
			continue
		}
		fmt.Fprintf(w, "\nFailed Placements: task group %q\n", g)
		fp := []pair{{"Nodes Evaluated", strconv.Itoa(m.NodesEvaluated)}, {"Nodes Filtered", strconv.Itoa(m.NodesFiltered)},
			{"Nodes Exhausted", strconv.Itoa(m.NodesExhausted)}}
		for _, d := range slices.Sorted(maps.Keys(m.DimensionExhausted)) {
			fp = append(fp, pair{"Dimension " + d + " exhausted", strconv.Itoa(m.DimensionExhausted[d])})
		}
		for _, c := range slices.Sorted(maps.Keys(m.ConstraintFiltered)) {
			fp = append(fp, pair{"Constraint " + c + " filtered", strconv.Itoa(m.ConstraintFiltered[c])})
		}
		if err := printPairs(w, fp); err != nil {
			return err
		}
	}
	if !related {
		return nil
	}
	fmt.Fprintln(w, "\nRelated Evaluations")
	return printEvalStubs(w, e.RelatedEvals, "No related evaluations")
}
