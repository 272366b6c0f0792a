package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// showDeploymentAllocs writes the allocations placed under deployment id
// (an id or unique prefix), as `deployment status -verbose` shows them
// after the deployment, as Nomad's does.
func showDeploymentAllocs(cmd *cobra.Command, g *globals, id string) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	list, _, err := c.DeploymentAllocations(cmd.Context(), id, nil)
	if err != nil {
		return fmt.Errorf("read the allocations of deployment %q: %w", id, err)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintln(w, "\nAllocations")
	return printAllocTable(w, g.display(), list, false)
}
