package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
)

// cliDeployment is a deployment as the API answers it.
type cliDeployment struct {
	ID                string
	Namespace         string
	JobID             string
	JobVersion        uint64
	Status            string
	StatusDescription string
	TaskGroups        map[string]*struct {
		Promoted                                    bool
		DesiredCanaries, DesiredTotal, PlacedAllocs int
		HealthyAllocs, UnhealthyAllocs              int
		PlacedCanaries                              []string
	}
	CreateIndex uint64
	ModifyIndex uint64
}

func newDeploymentCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployment",
		Short: "Interact with deployments",
	}
	cmd.AddCommand(newDeploymentListCommand(g), newDeploymentStatusCommand(g))
	return cmd
}

func newDeploymentListCommand(g *globals) *cobra.Command {
	var (
		asJSON    bool
		namespace string
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List deployments, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/deployments", url.Values{"namespace": {namespace}}, "list deployments", asJSON, printDeployments)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.Flags().StringVar(&namespace, "namespace", "default", "namespace to list, * for all")
	return cmd
}

func newDeploymentStatusCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [flags] <id>",
		Short: "Show a deployment by id or unique id prefix",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, g, pathf("/v1/deployment/%s", args[0]), nil, fmt.Sprintf("read deployment %q", args[0]), asJSON, printDeployment)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	return cmd
}

// printDeployments writes a table of deployments, ids in full (N16).
func printDeployments(w io.Writer, list []cliDeployment) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No deployments found")
		return err
	}
	rows := make([][]string, len(list))
	for i, d := range list {
		rows[i] = []string{d.ID, d.JobID, strconv.FormatUint(d.JobVersion, 10), d.Status, orDash(d.StatusDescription)}
	}
	return printTable(w, []string{"ID", "Job ID", "Job Version", "Status", "Description"}, rows)
}

// printDeployment writes the "Key = value" view of `ordo deployment status`
// and a table of its groups.
func printDeployment(w io.Writer, d cliDeployment) error {
	err := printPairs(w, []pair{
		{"ID", d.ID},
		{"Namespace", d.Namespace},
		{"Job ID", d.JobID},
		{"Job Version", strconv.FormatUint(d.JobVersion, 10)},
		{"Status", d.Status},
		{"Description", orNone(d.StatusDescription)},
		{"Create Index", strconv.FormatUint(d.CreateIndex, 10)},
		{"Modify Index", strconv.FormatUint(d.ModifyIndex, 10)},
	})
	if err != nil || len(d.TaskGroups) == 0 {
		return err
	}
	fmt.Fprintln(w, "\nDeployed")
	var rows [][]string
	for _, name := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		g := d.TaskGroups[name]
		if g == nil {
			continue
		}
		rows = append(rows, []string{name, strconv.FormatBool(g.Promoted), strconv.Itoa(g.DesiredCanaries), strconv.Itoa(g.DesiredTotal),
			strconv.Itoa(g.PlacedAllocs), strconv.Itoa(g.HealthyAllocs), strconv.Itoa(g.UnhealthyAllocs)})
	}
	return printTable(w, []string{"Task Group", "Promoted", "Desired Canaries", "Desired", "Placed", "Healthy", "Unhealthy"}, rows)
}
