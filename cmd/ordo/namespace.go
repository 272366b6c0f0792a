package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newNamespaceCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "namespace",
		Short: "Interact with namespaces",
	}
	cmd.AddCommand(newNamespaceListCommand(g), newNamespaceStatusCommand(g),
		newNamespaceApplyCommand(g), newNamespaceDeleteCommand(g))
	return cmd
}

func newNamespaceListCommand(g *globals) *cobra.Command {
	var (
		asJSON bool
		prefix string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List namespaces",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if prefix != "" {
				q.Set("prefix", prefix)
			}
			return show(cmd, g, "/v1/namespaces", q, "list namespaces", asJSON, printNamespaces)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	cmd.Flags().StringVar(&prefix, "prefix", "", "list only namespaces whose name starts with this prefix")
	return cmd
}

// printNamespaces writes the table of `ordo namespace list`.
func printNamespaces(w io.Writer, list []api.Namespace) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No namespaces found")
		return err
	}
	rows := make([][]string, len(list))
	for i, ns := range list {
		rows[i] = []string{ns.Name, ns.Description}
	}
	return printTable(w, []string{"Name", "Description"}, rows)
}

func newNamespaceStatusCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [flags] <name>",
		Short: "Show a namespace",
		Args:  oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, g, api.Pathf("/v1/namespace/%s", args[0]), nil, fmt.Sprintf("read namespace %q", args[0]), asJSON, printNamespace)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

// printNamespace writes the "Key = value" view of `ordo namespace status`,
// followed by a Metadata section when the namespace has any.
func printNamespace(w io.Writer, ns api.Namespace) error {
	pairs := []pair{{"Name", ns.Name}, {"Description", orNone(ns.Description)}}
	if ns.VariablesQuota != 0 {
		pairs = append(pairs, pair{"Variables Quota", quotaString(ns.VariablesQuota)})
	}
	err := printPairs(w, append(pairs,
		pair{"Create Index", strconv.FormatUint(ns.CreateIndex, 10)},
		pair{"Modify Index", strconv.FormatUint(ns.ModifyIndex, 10)}))
	if err != nil || len(ns.Meta) == 0 {
		return err
	}
	if _, err := fmt.Fprintln(w, "\nMetadata"); err != nil {
		return err
	}
	var meta []pair
	for _, k := range slices.Sorted(maps.Keys(ns.Meta)) {
		meta = append(meta, pair{k, ns.Meta[k]})
	}
	return printPairs(w, meta)
}

// quotaString shows a variables quota in bytes.
func quotaString(n int64) string { return strconv.FormatInt(n, 10) + " bytes" }

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newNamespaceApplyCommand(g *globals) *cobra.Command {
	var (
		description string
		metaFlags   []string
		quota       string
	)
	cmd := &cobra.Command{
		Use:   "apply [flags] <name>",
		Short: "Create or update a namespace",
		Long: `Create or update a namespace.

Flags that are given replace that field of an existing namespace; fields
whose flags are not given keep their values. -meta replaces the whole
metadata map with the pairs given. -variables-quota bounds the bytes of
encrypted variables the namespace may hold (a size such as 64KiB or 10MB;
0 removes the limit).`,
		Args: oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			meta, err := parseMeta(metaFlags)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			ns := api.Namespace{Name: name}
			err = c.Get(cmd.Context(), api.Pathf("/v1/namespace/%s", name), nil, &ns)
			if err != nil && !api.IsNotFound(err) {
				return fmt.Errorf("read namespace %q: %w", name, err)
			}
			req := api.NamespaceRequest{Name: name, Description: ns.Description, Meta: ns.Meta, VariablesQuota: ns.VariablesQuota}
			if cmd.Flags().Changed("variables-quota") {
				if req.VariablesQuota, err = parseBytes(quota); err != nil {
					return fmt.Errorf("invalid -variables-quota %q: %w", quota, err)
				}
			}
			if cmd.Flags().Changed("description") {
				req.Description = description
			}
			if cmd.Flags().Changed("meta") {
				req.Meta = meta
			}
			if err := c.Put(cmd.Context(), api.Pathf("/v1/namespace/%s", name), req, nil); err != nil {
				return fmt.Errorf("apply namespace %q: %w", name, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully applied namespace %q!\n", name)
			return err
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "a human-readable description of the namespace")
	cmd.Flags().StringArrayVar(&metaFlags, "meta", nil, "a key=value pair of metadata; repeatable")
	cmd.Flags().StringVar(&quota, "variables-quota", "", "bytes of encrypted variables the namespace may hold (64KiB, 10MB; 0: no limit)")
	return cmd
}

// parseBytes reads a size: a number of bytes with an optional unit (B,
// KB, MB, GB in powers of 1000; KiB, MiB, GiB in powers of 1024).
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errors.New("want a non-negative size such as 65536, 64KiB or 10MB")
	}
	return n * mult, nil
}

// parseMeta reads -meta key=value flags into a map; a later key wins.
func parseMeta(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	meta := make(map[string]string, len(flags))
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid -meta %q: want key=value", f)
		}
		meta[k] = v
	}
	return meta, nil
}

func newNamespaceDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete <name>",
		Short: "Delete a namespace",
		Args:  oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), api.Pathf("/v1/namespace/%s", args[0]), nil); err != nil {
				return fmt.Errorf("delete namespace %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted namespace %q!\n", args[0])
			return err
		},
	}
}
