package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newDeploymentCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployment",
		Short: "Interact with deployments",
	}
	cmd.AddCommand(newDeploymentListCommand(g), newDeploymentStatusCommand(g), newDeploymentPromoteCommand(g),
		newDeploymentFailCommand(g), newDeploymentPauseCommand(g, true), newDeploymentPauseCommand(g, false))
	return cmd
}

// deploymentWrite resolves the deployment id or prefix, PUTs body to
// /v1/deployment/<action>/<id> and returns the full id and the answer.
func deploymentWrite(cmd *cobra.Command, g *globals, action, idOrPrefix string, body map[string]any) (string, api.DeploymentUpdateResponse, error) {
	var out api.DeploymentUpdateResponse
	c, err := g.client()
	if err != nil {
		return "", out, err
	}
	var d api.Deployment
	if err := c.Get(cmd.Context(), api.Pathf("/v1/deployment/%s", idOrPrefix), nil, &d); err != nil {
		return "", out, fmt.Errorf("read deployment %q: %w", idOrPrefix, err)
	}
	body["DeploymentID"] = d.ID
	if err := c.Put(cmd.Context(), api.Pathf("/v1/deployment/"+action+"/%s", d.ID), body, &out); err != nil {
		return d.ID, out, fmt.Errorf("%s deployment %q: %w", action, d.ID, err)
	}
	return d.ID, out, nil
}

// evalNote says which evaluation a deployment write created.
func evalNote(out api.DeploymentUpdateResponse) string {
	if out.EvalID == "" {
		return fmt.Sprintf(" at index %d", out.Index)
	}
	return fmt.Sprintf("; evaluation %q created at index %d", out.EvalID, out.Index)
}

func newDeploymentPromoteCommand(g *globals) *cobra.Command {
	var groups []string
	cmd := &cobra.Command{
		Use:   "promote [flags] <id>",
		Short: "Promote a deployment's canaries",
		Long: `Promote a deployment's canaries: every group with canaries, or the groups
named with -group (repeatable). Each group's canaries must all be healthy.
Promoted groups replace their remaining old allocations, max_parallel at a time.`,
		Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"All": len(groups) == 0}
			if len(groups) > 0 {
				body["Groups"] = groups
			}
			id, out, err := deploymentWrite(cmd, g, "promote", args[0], body)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Deployment %q promoted%s\n", id, evalNote(out))
			return err
		},
	}
	cmd.Flags().StringArrayVar(&groups, "group", nil, "a task group to promote (repeatable); default every group")
	return cmd
}

func newDeploymentFailCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "fail <id>",
		Short: "Mark a deployment failed",
		Long: `Mark a deployment failed. A group with auto_revert reverts the job to its
latest stable version: the latest version whose deployment succeeded.`,
		Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, out, err := deploymentWrite(cmd, g, "fail", args[0], map[string]any{})
			if err != nil {
				return err
			}
			msg := fmt.Sprintf("Deployment %q failed%s\n", id, evalNote(out))
			if v := out.RevertedJobVersion; v != nil {
				msg += fmt.Sprintf("Auto-reverted to job version %d\n", *v)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), msg)
			return err
		},
	}
}

// newDeploymentPauseCommand is "pause", or "resume" when pause is false.
func newDeploymentPauseCommand(g *globals, pause bool) *cobra.Command {
	use, short, done := "pause <id>", "Pause a deployment: no more allocations are replaced", "paused"
	if !pause {
		use, short, done = "resume <id>", "Resume a paused deployment", "resumed"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, out, err := deploymentWrite(cmd, g, "pause", args[0], map[string]any{"Pause": pause})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Deployment %q %s%s\n", id, done, evalNote(out))
			return err
		},
	}
}

func newDeploymentListCommand(g *globals) *cobra.Command {
	var (
		out       *outputFlags
		namespace string
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List deployments, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if namespace != "" {
				q.Set("namespace", namespace)
			}
			return showOut(cmd, g, "/v1/deployments", q, "list deployments", out, printDeployments)
		},
	}
	out = addOutputFlags(cmd)
	cmd.Flags().StringVar(&namespace, "namespace", "", "namespace to list, * for all (default $ORDO_NAMESPACE, $NOMAD_NAMESPACE or \"default\")")
	return cmd
}

func newDeploymentStatusCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] <id>",
		Short: "Show a deployment by id or unique id prefix",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := showOut(cmd, g, api.Pathf("/v1/deployment/%s", args[0]), nil, fmt.Sprintf("read deployment %q", args[0]), out, printDeployment)
			if machine, _ := out.active(); err != nil || machine || !g.verbose {
				return err
			}
			return showDeploymentAllocs(cmd, g, args[0]) // deploymentallocs.go
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// printDeployments writes a table of deployments: short ids unless -verbose.
func printDeployments(w io.Writer, d display, list []api.Deployment) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No deployments found")
		return err
	}
	rows := make([][]string, len(list))
	for i, dep := range list {
		rows[i] = []string{d.id(dep.ID), dep.JobID, strconv.FormatUint(dep.JobVersion, 10), dep.Status, orDash(dep.StatusDescription)}
	}
	return printTable(w, []string{"ID", "Job ID", "Job Version", "Status", "Description"}, rows)
}

// printDeployment writes the "Key = value" view of `ordo deployment status`
// and a table of its groups.
func printDeployment(w io.Writer, disp display, d api.Deployment) error {
	err := printPairs(w, []pair{
		{"ID", disp.id(d.ID)},
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
		deadline := orDash(disp.when(g.RequireProgressBy))
		rows = append(rows, []string{name, strconv.FormatBool(g.Promoted), strconv.Itoa(g.DesiredCanaries), strconv.Itoa(g.DesiredTotal),
			strconv.Itoa(g.PlacedAllocs), strconv.Itoa(g.HealthyAllocs), strconv.Itoa(g.UnhealthyAllocs), deadline})
	}
	return printTable(w, []string{"Task Group", "Promoted", "Desired Canaries", "Desired", "Placed", "Healthy", "Unhealthy",
		"Progress Deadline"}, rows)
}
