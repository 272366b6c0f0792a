package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// addJobFlag gives an alloc verb Nomad's -job flag: its first argument
// then names a job (id or prefix) and the verb acts on one of the job's
// running allocations. -namespace says where the job is.
func addJobFlag(g *globals, cmd *cobra.Command) *bool {
	job := cmd.Flags().Bool("job", false, "the first argument is a job id or prefix: use one of its running allocations")
	cmd.Flags().String("namespace", g.env("NAMESPACE"), "namespace of the job -job names ($ORDO_NAMESPACE, $NOMAD_NAMESPACE; default \"default\")")
	return job
}

// allocArg returns the allocation a verb's first argument names: the
// argument itself, or with -job the most recently created running
// allocation of the job it names (Nomad picks one at random; the newest is
// the one a user most likely means, and the same every time).
func allocArg(cmd *cobra.Command, g *globals, arg string, job bool) (string, error) {
	if !job {
		return arg, nil
	}
	c, id, err := jobClient(cmd, g, arg)
	if err != nil {
		return "", err
	}
	var list []api.AllocationListStub
	if err := c.Get(cmd.Context(), api.Pathf("/v1/job/%s/allocations", id), jobQuery(cmd), &list); err != nil {
		return "", fmt.Errorf("list allocations of job %q: %w", id, err)
	}
	var pick *api.AllocationListStub
	for i := range list {
		if a := &list[i]; a.ClientStatus == "running" && (pick == nil || a.CreateIndex > pick.CreateIndex) {
			pick = a
		}
	}
	if pick == nil {
		return "", fmt.Errorf("job %q has no running allocations", id)
	}
	return pick.ID, nil
}
