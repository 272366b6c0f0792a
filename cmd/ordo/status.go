package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// statusContexts are the search contexts `ordo status` resolves a prefix
// in, in the order it prefers them, with the command that shows each.
var statusContexts = []struct {
	context string
	command []string
}{
	{"jobs", []string{"job", "status"}},
	{"nodes", []string{"node", "status"}},
	{"allocs", []string{"alloc", "status"}},
	{"evals", []string{"eval", "status"}},
	{"deployment", []string{"deployment", "status"}},
	{"namespaces", []string{"namespace", "status"}},
	{"node_pools", []string{"node", "pool", "info"}},
	{"plugins", []string{"plugin", "status"}},
	{"volumes", []string{"volume", "status"}},
}

// newStatusCommand is `ordo status [prefix]`, Nomad's top-level status:
// with no argument the jobs; with one, the job, node, allocation,
// evaluation, deployment, namespace, node pool, plugin or volume whose id
// starts with it, found through PUT /v1/search.
func newStatusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status [<prefix>]",
		Short: "List jobs, or show whatever an id prefix names",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return runSubcommand(cmd, []string{"job", "status"}, nil)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var res api.SearchResponse
			req := api.SearchRequest{Prefix: args[0], Context: "all"}
			if err := c.Put(cmd.Context(), "/v1/search", req, &res); err != nil {
				return fmt.Errorf("search %q: %w", args[0], err)
			}
			path, id, err := statusTarget(args[0], res.Matches)
			if err != nil {
				return err
			}
			return runSubcommand(cmd, path, []string{id})
		},
	}
}

// statusTarget picks the command and argument that show what prefix
// names: an exact id in one context wins, else the one context with
// matches (its own status resolves the prefix or lists the candidates).
func statusTarget(prefix string, matches map[string][]string) ([]string, string, error) {
	var exact, found []int
	var summary []string
	for i, sc := range statusContexts {
		ids := matches[sc.context]
		if len(ids) == 0 {
			continue
		}
		found = append(found, i)
		summary = append(summary, fmt.Sprintf("%s (%d)", sc.context, len(ids)))
		if slices.Contains(ids, prefix) {
			exact = append(exact, i)
		}
	}
	switch {
	case len(exact) == 1:
		return statusContexts[exact[0]].command, prefix, nil
	case len(found) == 1:
		sc := statusContexts[found[0]]
		if ids := matches[sc.context]; len(ids) == 1 {
			return sc.command, ids[0], nil
		}
		return sc.command, prefix, nil
	case len(found) == 0:
		return nil, "", fmt.Errorf("no job, node, allocation, evaluation, deployment, namespace, node pool, plugin or volume matches %q", prefix)
	}
	return nil, "", fmt.Errorf("prefix %q matches several kinds of object: %s; give more of the id or use the kind's own status command",
		prefix, strings.Join(summary, ", "))
}

// runSubcommand runs the command at path under cmd's root with args, as if
// typed, its flags at their defaults.
func runSubcommand(cmd *cobra.Command, path, args []string) error {
	sub, _, err := cmd.Root().Find(path)
	if err != nil || sub.RunE == nil {
		return fmt.Errorf("no %q command", strings.Join(path, " "))
	}
	sub.SetContext(cmd.Context())
	return sub.RunE(sub, args)
}
