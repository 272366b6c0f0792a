package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// variableSpec is a put's body, and what `var put -in json` reads: a JSON
// object with Items (and optionally Path and Namespace, which must agree
// with the command line).
type variableSpec struct {
	Namespace string            `json:",omitempty"`
	Path      string            `json:",omitempty"`
	Items     map[string]string `json:"Items"`
}

func newVarCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "var",
		Short: "Interact with variables (encrypted key/value items at a path)",
	}
	cmd.PersistentFlags().String("namespace", g.env("NAMESPACE"), "namespace of the variables ($ORDO_NAMESPACE, $NOMAD_NAMESPACE; default \"default\")")
	cmd.AddCommand(newVarPutCommand(g), newVarGetCommand(g), newVarListCommand(g), newVarPurgeCommand(g))
	return cmd
}

// varQuery returns the namespace parameter of cmd's -namespace flag.
func varQuery(cmd *cobra.Command) url.Values {
	q := url.Values{}
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		q.Set("namespace", ns)
	}
	return q
}

// varPath is the API path of a variable; paths hold only URL-safe
// characters (the server refuses others by name).
func varPath(path string) string { return "/v1/var/" + strings.Trim(path, "/") }

func newVarPutCommand(g *globals) *cobra.Command {
	var (
		cas    int64
		in     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "put [flags] <path> [<key>=<value>]...",
		Short: "Create or replace a variable",
		Long: `Create or replace the variable at <path> with the items given as
key=value arguments (a value of @file reads the file, - reads stdin), or
read from a JSON file with -in json <file> (an object with Items, as
Nomad's variable specification). Arguments override the file's items.

-check-index (or -cas) N writes only if the variable's modify index is N; 0
writes only if it does not exist yet. Items are encrypted by the server
before anything is logged.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := strings.Trim(args[0], "/")
			spec := variableSpec{Items: map[string]string{}}
			rest := args[1:]
			if in != "" {
				if in != "json" {
					return fmt.Errorf("invalid -in %q: only json is supported", in)
				}
				if len(rest) == 0 {
					return errors.New("-in json needs a file (or - for stdin) after the path")
				}
				if err := readSpec(cmd.InOrStdin(), rest[0], &spec); err != nil {
					return err
				}
				rest = rest[1:]
				if spec.Path != "" && strings.Trim(spec.Path, "/") != path {
					return fmt.Errorf("the file's Path %q differs from %q", spec.Path, path)
				}
				if spec.Items == nil {
					spec.Items = map[string]string{}
				}
			}
			for _, kv := range rest {
				k, v, err := parseItem(cmd.InOrStdin(), kv)
				if err != nil {
					return err
				}
				spec.Items[k] = v
			}
			if len(spec.Items) == 0 {
				return errors.New("no items: give key=value arguments or -in json <file>")
			}
			q := varQuery(cmd)
			if spec.Namespace != "" && q.Get("namespace") == "" {
				q.Set("namespace", spec.Namespace)
			}
			spec.Path = path
			if cmd.Flags().Changed("cas") || cmd.Flags().Changed("check-index") {
				if cas < 0 {
					return fmt.Errorf("invalid -cas %d: a modify index is not negative", cas)
				}
				q.Set("cas", strconv.FormatInt(cas, 10))
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var out api.Variable
			if err := c.Call(cmd.Context(), "PUT", varPath(path), q, spec, &out); err != nil {
				return fmt.Errorf("put variable %q: %w", path, err) // a cas mismatch names both indexes
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Created variable %q in namespace %q with modify index %d\n", out.Path, out.Namespace, out.ModifyIndex)
			return err
		},
	}
	cmd.Flags().Int64Var(&cas, "cas", 0, "write only if the variable's modify index is this (0: only if it does not exist)")
	cmd.Flags().Int64Var(&cas, "check-index", 0, "the same as -cas (Nomad's name)")
	cmd.Flags().StringVar(&in, "in", "", "read the variable from a file in this format (json); the file follows the path")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the written variable as JSON")
	return cmd
}

// readSpec reads a JSON variable specification from file (- for stdin).
func readSpec(stdin io.Reader, file string, spec *variableSpec) error {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		b, err = os.ReadFile(strings.TrimPrefix(file, "@"))
	}
	if err != nil {
		return fmt.Errorf("read variable file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return fmt.Errorf("variable file %s: %w (want {\"Items\": {\"key\": \"value\"}})", file, err)
	}
	return nil
}

// parseItem reads one key=value argument; a value of @file is the file's
// content and - is stdin's.
func parseItem(stdin io.Reader, arg string) (string, string, error) {
	k, v, ok := strings.Cut(arg, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("invalid item %q: want key=value", arg)
	}
	switch {
	case v == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		if err != nil {
			return "", "", fmt.Errorf("item %s from stdin: %w", k, err)
		}
		v = string(b)
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return "", "", fmt.Errorf("item %s: %w", k, err)
		}
		v = string(b)
	}
	return k, v, nil
}

func newVarGetCommand(g *globals) *cobra.Command {
	var (
		item   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "get [flags] <path>",
		Short: "Show a variable and its items",
		Args:  oneArg("<path>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := strings.Trim(args[0], "/")
			c, err := g.client()
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.Get(cmd.Context(), varPath(path), varQuery(cmd), &raw); err != nil {
				return fmt.Errorf("read variable %q: %w", path, err)
			}
			if asJSON && item == "" {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			var v api.Variable
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("read variable %q: decode: %w", path, err)
			}
			if item != "" {
				val, ok := v.Items[item]
				if !ok {
					return fmt.Errorf("variable %q has no item %q", path, item)
				}
				_, err := fmt.Fprintln(cmd.OutOrStdout(), val)
				return err
			}
			return printVariable(cmd.OutOrStdout(), g.display(), v)
		},
	}
	cmd.Flags().StringVar(&item, "item", "", "print only this item's value")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	return cmd
}

// printVariable writes the "Key = value" view of `ordo var get`: times
// as timestamps with how long ago (d's rendering).
func printVariable(w io.Writer, d display, v api.Variable) error {
	err := printPairs(w, []pair{
		{"Namespace", v.Namespace},
		{"Path", v.Path},
		{"Create Time", orDash(d.timestamp(time.Unix(0, v.CreateTime)))},
		{"Modify Time", orDash(d.timestamp(time.Unix(0, v.ModifyTime)))},
		{"Create Index", strconv.FormatUint(v.CreateIndex, 10)},
		{"Modify Index", strconv.FormatUint(v.ModifyIndex, 10)},
	})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\nItems"); err != nil {
		return err
	}
	keys := make([]string, 0, len(v.Items))
	for k := range v.Items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	items := make([]pair, len(keys))
	for i, k := range keys {
		items[i] = pair{k, v.Items[k]}
	}
	return printPairs(w, items)
}

func newVarListCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [flags] [<prefix>]",
		Short: "List variables (paths and metadata, never items)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := varQuery(cmd)
			if len(args) == 1 {
				q.Set("prefix", strings.TrimLeft(args[0], "/"))
			}
			out := &outputFlags{json: asJSON, template: templateFlag(cmd)}
			return showOut(cmd, g, "/v1/vars", q, "list variables", out, printVariables)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

// printVariables writes the table of `ordo var list`, its times relative
// unless -verbose.
func printVariables(w io.Writer, d display, list []api.Variable) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No variables found")
		return err
	}
	rows := make([][]string, len(list))
	for i, v := range list {
		rows[i] = []string{v.Namespace, v.Path, orDash(d.whenNS(v.ModifyTime)), strconv.FormatUint(v.ModifyIndex, 10)}
	}
	return printTable(w, []string{"Namespace", "Path", "Last Updated", "Modify Index"}, rows)
}

func newVarPurgeCommand(g *globals) *cobra.Command {
	var cas int64
	cmd := &cobra.Command{
		Use:   "purge [flags] <path>",
		Short: "Delete a variable",
		Args:  oneArg("<path>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := strings.Trim(args[0], "/")
			q := varQuery(cmd)
			if cmd.Flags().Changed("cas") || cmd.Flags().Changed("check-index") {
				q.Set("cas", strconv.FormatInt(cas, 10))
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Call(cmd.Context(), "DELETE", varPath(path), q, nil, nil); err != nil {
				return fmt.Errorf("purge variable %q: %w", path, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully purged variable %q!\n", path)
			return err
		},
	}
	cmd.Flags().Int64Var(&cas, "cas", 0, "delete only if the variable's modify index is this")
	cmd.Flags().Int64Var(&cas, "check-index", 0, "the same as -cas (Nomad's name)")
	return cmd
}
