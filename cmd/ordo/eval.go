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
		out       *outputFlags
		namespace string
		filter    string
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List evaluations, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if namespace != "" {
				q.Set("namespace", namespace)
			}
			if filter != "" {
				q.Set("filter", filter)
			}
			return showOut(cmd, g, "/v1/evaluations", q, "list evaluations", out, func(w io.Writer, d display, list []api.Evaluation) error {
				return printEvalStubs(w, d, list, "No evaluations found")
			})
		},
	}
	out = addOutputFlags(cmd)
	cmd.Flags().StringVar(&namespace, "namespace", "", "namespace to list, * for all (default $ORDO_NAMESPACE, $NOMAD_NAMESPACE or \"default\")")
	cmd.Flags().StringVar(&filter, "filter", "", `list only what this expression selects (Nomad's filter syntax: 'Status == "pending"')`)
	return cmd
}

func newEvalStatusCommand(g *globals) *cobra.Command {
	var related bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] <id>",
		Short: "Show an evaluation by id or unique id prefix",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var q url.Values
			if related {
				q = url.Values{"related": {"true"}}
			}
			return showOut(cmd, g, api.Pathf("/v1/evaluation/%s", args[0]), q, fmt.Sprintf("read evaluation %q", args[0]), out,
				func(w io.Writer, d display, e api.Evaluation) error { return printEval(w, d, e, related) })
		},
	}
	out = addOutputFlags(cmd)
	cmd.Flags().BoolVar(&related, "related", false, "show the next, previous and blocked evaluations (N17)")
	return cmd
}

// printEvalStubs writes a table of evaluations: short ids unless -verbose.
func printEvalStubs(w io.Writer, d display, list []api.Evaluation, empty string) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, empty)
		return err
	}
	rows := make([][]string, len(list))
	for i, e := range list {
		rows[i] = []string{d.id(e.ID), strconv.Itoa(e.Priority), e.TriggeredBy, e.JobID, orDash(d.id(e.NodeID)), e.Status}
	}
	return printTable(w, []string{"ID", "Priority", "Triggered By", "Job ID", "Node ID", "Status"}, rows)
}

// printEval writes the "Key = value" view of `ordo eval status`: short
// ids and relative times unless -verbose, the reasons of failed
// placements as `job status` gives them.
func printEval(w io.Writer, d display, e api.Evaluation, related bool) error {
	pairs := []pair{
		{"ID", d.id(e.ID)},
		{"Create Time", d.timestamp(time.Unix(0, e.CreateTime))},
		{"Namespace", e.Namespace},
		{"Status", e.Status},
		{"Status Description", orNone(e.StatusDescription)},
		{"Type", e.Type},
		{"Triggered By", e.TriggeredBy},
		{"Job ID", e.JobID},
		{"Node ID", orNone(d.id(e.NodeID))},
		{"Deployment ID", orNone(d.id(e.DeploymentID))},
		{"Priority", strconv.Itoa(e.Priority)},
		{"Next Eval", orNone(d.id(e.NextEval))},
		{"Previous Eval", orNone(d.id(e.PreviousEval))},
		{"Blocked Eval", orNone(d.id(e.BlockedEval))},
	}
	if e.CreateTime == 0 {
		pairs = slices.Delete(pairs, 1, 2)
	}
	if !e.WaitUntil.IsZero() {
		pairs = append(pairs, pair{"Wait Until", d.timestamp(e.WaitUntil)})
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
	if len(e.FailedTGAllocs) > 0 {
		fmt.Fprintf(w, "\nFailed Placements\n%s", placementFailures(e.FailedTGAllocs, ""))
	}
	if !related {
		return nil
	}
	fmt.Fprintln(w, "\nRelated Evaluations")
	return printEvalStubs(w, d, e.RelatedEvals, "No related evaluations")
}
