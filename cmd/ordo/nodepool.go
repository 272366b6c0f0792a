package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// newNodePoolCommand is `ordo node pool`: Nomad's node pool verbs.
func newNodePoolCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Interact with node pools",
	}
	cmd.AddCommand(newNodePoolListCommand(g), newNodePoolInfoCommand(g), newNodePoolApplyCommand(g),
		newNodePoolDeleteCommand(g), newNodePoolNodesCommand(g), newNodePoolJobsCommand(g))
	return cmd
}

// showWith is showOut (format.go) for a render that needs no display.
func showWith[T any](cmd *cobra.Command, g *globals, path string, q url.Values, what string, out *outputFlags,
	render func(io.Writer, T) error) error {
	return showOut(cmd, g, path, q, what, out, func(w io.Writer, _ display, v T) error { return render(w, v) })
}

func newNodePoolListCommand(g *globals) *cobra.Command {
	var prefix, filter string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List node pools, the built-in all and default included",
		Args:  cobra.NoArgs,
	}
	out := addOutputFlags(cmd)
	cmd.Flags().StringVar(&prefix, "prefix", "", "list only pools whose name starts with this prefix")
	cmd.Flags().StringVar(&filter, "filter", "", "list only pools this filter expression selects")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		q := url.Values{}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		if filter != "" {
			q.Set("filter", filter)
		}
		return showWith(cmd, g, "/v1/node/pools", q, "list node pools", out, printNodePools)
	}
	return cmd
}

// printNodePools writes the table of `ordo node pool list`.
func printNodePools(w io.Writer, list []api.NodePool) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No node pools found")
		return err
	}
	rows := make([][]string, len(list))
	for i, p := range list {
		rows[i] = []string{p.Name, orDash(p.Description)}
	}
	return printTable(w, []string{"Name", "Description"}, rows)
}

func newNodePoolInfoCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "info [flags] <pool>",
		Short: "Show a node pool",
		Args:  oneArg("<pool>"),
	}
	out := addOutputFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return showWith(cmd, g, api.Pathf("/v1/node/pool/%s", args[0]), nil, fmt.Sprintf("read node pool %q", args[0]), out, printNodePool)
	}
	return cmd
}

// printNodePool writes the "Key = value" view of `ordo node pool info`,
// with a Metadata section when the pool has any.
func printNodePool(w io.Writer, p api.NodePool) error {
	if err := printPairs(w, []pair{{"Name", p.Name}, {"Description", orNone(p.Description)},
		{"Create Index", strconv.FormatUint(p.CreateIndex, 10)}, {"Modify Index", strconv.FormatUint(p.ModifyIndex, 10)}}); err != nil {
		return err
	}
	if len(p.Meta) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nMetadata")
	var meta []pair
	for _, k := range slices.Sorted(maps.Keys(p.Meta)) {
		meta = append(meta, pair{k, p.Meta[k]})
	}
	return printPairs(w, meta)
}

// nodePoolSpec is a node pool specification file in HCL, as Nomad's:
//
//	node_pool "gpu" {
//	  description = "Machines with a GPU."
//	  meta {
//	    team = "ml"
//	  }
//	}
type nodePoolSpec struct {
	Pools []struct {
		Name        string   `hcl:"name,label"`
		Description *string  `hcl:"description,optional"`
		Meta        *hclBody `hcl:"meta,block"`
	} `hcl:"node_pool,block"`
}

// hclBody is a block whose attributes are free-form.
type hclBody struct {
	Body hcl.Body `hcl:",remain"`
}

// parseNodePoolSpec reads a node pool specification: JSON (an api.NodePool)
// when json is set or the file ends in .json, HCL otherwise.
func parseNodePoolSpec(path string, src []byte, asJSON bool) (api.NodePool, error) {
	if asJSON || strings.HasSuffix(path, ".json") {
		var p api.NodePool
		if err := json.Unmarshal(src, &p); err != nil {
			return p, fmt.Errorf("parse %s: %w", path, err)
		}
		return p, nil
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return api.NodePool{}, fmt.Errorf("parse %s: %w", path, diagError(diags))
	}
	var spec nodePoolSpec
	if diags := gohcl.DecodeBody(f.Body, nil, &spec); diags.HasErrors() {
		return api.NodePool{}, fmt.Errorf("parse %s: %w", path, diagError(diags))
	}
	if len(spec.Pools) != 1 {
		return api.NodePool{}, fmt.Errorf("parse %s: expected one node_pool block, found %d", path, len(spec.Pools))
	}
	sp := spec.Pools[0]
	p := api.NodePool{Name: sp.Name}
	if sp.Description != nil {
		p.Description = *sp.Description
	}
	if sp.Meta != nil {
		attrs, diags := sp.Meta.Body.JustAttributes()
		if diags.HasErrors() {
			return p, fmt.Errorf("parse %s: meta: %w", path, diagError(diags))
		}
		p.Meta = map[string]string{}
		for name, a := range attrs {
			var v string
			if diags := gohcl.DecodeExpression(a.Expr, nil, &v); diags.HasErrors() {
				return p, fmt.Errorf("parse %s: meta.%s: %w", path, name, diagError(diags))
			}
			p.Meta[name] = v
		}
	}
	return p, nil
}

func newNodePoolApplyCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "apply [flags] <file>",
		Short: "Create or update a node pool from a specification file (HCL, or JSON with -json)",
		Args:  oneArg("<file>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := readPoolFile(cmd, args[0])
			if err != nil {
				return err
			}
			p, err := parseNodePoolSpec(args[0], src, asJSON)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Put(cmd.Context(), "/v1/node/pools", p, nil); err != nil {
				return fmt.Errorf("apply node pool %q: %w", p.Name, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully applied node pool %q!\n", p.Name)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "the file is JSON")
	return cmd
}

// readPoolFile reads a specification file, or standard input for "-".
func readPoolFile(cmd *cobra.Command, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(cmd.InOrStdin())
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return src, nil
}

func newNodePoolDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete <pool>",
		Short: "Delete a node pool no node and no job is in",
		Args:  oneArg("<pool>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), api.Pathf("/v1/node/pool/%s", args[0]), nil); err != nil {
				return fmt.Errorf("delete node pool %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted node pool %q!\n", args[0])
			return err
		},
	}
}

func newNodePoolNodesCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nodes [flags] <pool>",
		Short: "List the nodes in a node pool (every node for all)",
		Args:  oneArg("<pool>"),
	}
	out := addOutputFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return showOut(cmd, g, api.Pathf("/v1/node/pool/%s/nodes", args[0]), nil,
			fmt.Sprintf("list the nodes of node pool %q", args[0]), out, printNodeTable)
	}
	return cmd
}

func newNodePoolJobsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs [flags] <pool>",
		Short: "List the jobs that run in a node pool (-namespace '*' for every namespace)",
		Args:  oneArg("<pool>"),
	}
	out := addOutputFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return showWith(cmd, g, api.Pathf("/v1/node/pool/%s/jobs", args[0]), nil,
			fmt.Sprintf("list the jobs of node pool %q", args[0]), out, printJobs)
	}
	return cmd
}
