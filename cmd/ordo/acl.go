package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

// defaultToken returns $ORDO_TOKEN, else $NOMAD_TOKEN.
func defaultToken(getenv func(string) string) string {
	if t := getenv("ORDO_TOKEN"); t != "" {
		return t
	}
	return getenv("NOMAD_TOKEN")
}

func newACLCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "acl", Short: "Bootstrap ACLs and manage policies, roles and tokens"}
	cmd.AddCommand(newACLBootstrapCommand(g), newACLPolicyCommand(g), newACLRoleCommand(g), newACLTokenCommand(g))
	return cmd
}

func newACLBootstrapCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Create the first management token (once; again after a reset)",
		Long: `Create the first management token. It succeeds once; to bootstrap again,
write the reset index the refusal names to <data_dir>/acl-bootstrap-reset on
the leader and run it again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var t api.ACLToken
			if err := c.Put(cmd.Context(), "/v1/acl/bootstrap", nil, &t); err != nil {
				return fmt.Errorf("bootstrap ACLs: %w", err)
			}
			return printToken(cmd.OutOrStdout(), t, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the token as JSON")
	return cmd
}

func printToken(w io.Writer, t api.ACLToken, asJSON bool) error {
	if asJSON {
		return printJSONValue(w, t)
	}
	exp := "<none>"
	if t.ExpirationTime != nil {
		exp = t.ExpirationTime.Format(time.RFC3339)
	}
	pols, roles := "n/a", "n/a"
	if len(t.Policies) > 0 {
		pols = strings.Join(t.Policies, ", ")
	}
	if len(t.Roles) > 0 {
		var names []string
		for _, r := range t.Roles {
			names = append(names, r.Name+" ("+r.ID+")")
		}
		roles = strings.Join(names, ", ")
	}
	secret := t.SecretID
	if secret == "" {
		secret = "<hidden>"
	}
	return printPairs(w, []pair{
		{"Accessor ID", t.AccessorID}, {"Secret ID", secret}, {"Name", orDash(t.Name)}, {"Type", t.Type},
		{"Global", fmt.Sprint(t.Global)}, {"Create Time", t.CreateTime.Format(time.RFC3339)}, {"Expiry Time", exp},
		{"Create Index", fmt.Sprint(t.CreateIndex)}, {"Modify Index", fmt.Sprint(t.ModifyIndex)},
		{"Policies", pols}, {"Roles", roles},
	})
}

func printJSONValue(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func newACLPolicyCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Manage ACL policies"}
	cmd.AddCommand(newACLPolicyApplyCommand(g), newACLPolicyListCommand(g), newACLPolicyInfoCommand(g),
		newACLPolicyDeleteCommand(g))
	return cmd
}

func newACLPolicyApplyCommand(g *globals) *cobra.Command {
	var description, namespace, job, group, task string
	cmd := &cobra.Command{
		Use:   "apply [flags] <name> <file>",
		Short: "Create or update an ACL policy from an HCL or JSON file (- for stdin)",
		Long: `Create or update an ACL policy. With -job (and optionally -group and -task)
the policy is attached to that workload: its workload identity gets it.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("this command takes two arguments: <name> <file>")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var src []byte
			var err error
			if args[1] == "-" {
				src, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
			} else {
				src, err = os.ReadFile(args[1])
			}
			if err != nil {
				return fmt.Errorf("read policy: %w", err)
			}
			p := api.ACLPolicy{Name: args[0], Description: description, Rules: string(src)}
			switch {
			case job != "":
				p.JobACL = &events.ACLWorkload{Namespace: namespace, JobID: job, Group: group, Task: task}
			case group != "" || task != "":
				return fmt.Errorf("-group and -task need -job")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Put(cmd.Context(), api.Pathf("/v1/acl/policy/%s", args[0]), p, nil); err != nil {
				return fmt.Errorf("apply ACL policy %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully wrote %q ACL policy!\n", args[0])
			return err
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "the policy's description")
	cmd.Flags().StringVar(&namespace, "namespace", "default", "the attached workload's namespace")
	cmd.Flags().StringVar(&job, "job", "", "attach the policy to this job's workload identities")
	cmd.Flags().StringVar(&group, "group", "", "narrow the attachment to this task group")
	cmd.Flags().StringVar(&task, "task", "", "narrow the attachment to this task")
	return cmd
}

func newACLPolicyListCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Short: "List ACL policies", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/acl/policies", nil, "list ACL policies", asJSON, func(w io.Writer, list []api.ACLPolicy) error {
				if len(list) == 0 {
					_, err := fmt.Fprintln(w, "No policies found")
					return err
				}
				rows := make([][]string, len(list))
				for i, p := range list {
					rows[i] = []string{p.Name, p.Description, workloadOf(p.JobACL)}
				}
				return printTable(w, []string{"Name", "Description", "Workload"}, rows)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func workloadOf(j *events.ACLWorkload) string {
	if j == nil {
		return "-"
	}
	parts := []string{j.Namespace, j.JobID}
	if j.Group != "" {
		parts = append(parts, j.Group)
	}
	if j.Task != "" {
		parts = append(parts, j.Task)
	}
	return strings.Join(parts, "/")
}

func newACLPolicyInfoCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "info <name>", Short: "Show an ACL policy", Args: oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, g, api.Pathf("/v1/acl/policy/%s", args[0]), nil, "read ACL policy", asJSON, func(w io.Writer, p api.ACLPolicy) error {
				if err := printPairs(w, []pair{{"Name", p.Name}, {"Description", orDash(p.Description)},
					{"Workload", workloadOf(p.JobACL)}, {"CreateIndex", fmt.Sprint(p.CreateIndex)},
					{"ModifyIndex", fmt.Sprint(p.ModifyIndex)}}); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "\nRules\n\n%s\n", strings.TrimRight(p.Rules, "\n"))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func newACLPolicyDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "delete <name>", Short: "Delete an ACL policy", Args: oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteAndSay(cmd, g, api.Pathf("/v1/acl/policy/%s", args[0]), fmt.Sprintf("ACL policy %q", args[0]))
		},
	}
}

func deleteAndSay(cmd *cobra.Command, g *globals, path, what string) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	if err := c.Delete(cmd.Context(), path, nil); err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted %s!\n", what)
	return err
}

func newACLRoleCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Manage ACL roles"}
	cmd.AddCommand(newACLRoleWriteCommand(g, false), newACLRoleWriteCommand(g, true), newACLRoleListCommand(g),
		newACLRoleInfoCommand(g), newACLRoleDeleteCommand(g))
	return cmd
}

// roleBody is the body of a role create or update.
type roleBody struct {
	ID          string `json:",omitempty"`
	Name        string
	Description string
	Policies    []api.ACLRolePolicyLink
}

func newACLRoleWriteCommand(g *globals, update bool) *cobra.Command {
	var (
		name, description string
		policies          []string
		asJSON            bool
	)
	use, short, args := "create", "Create an ACL role", cobra.NoArgs
	if update {
		use, short, args = "update <id>", "Update an ACL role (flags given replace those fields)", oneArg("<id>")
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			body := roleBody{Name: name, Description: description}
			path := "/v1/acl/role"
			if update {
				var old api.ACLRole
				if err := c.Get(cmd.Context(), api.Pathf("/v1/acl/role/%s", args[0]), nil, &old); err != nil {
					return fmt.Errorf("read ACL role %s: %w", args[0], err)
				}
				body = roleBody{ID: old.ID, Name: old.Name, Description: old.Description, Policies: old.Policies}
				if cmd.Flags().Changed("name") {
					body.Name = name
				}
				if cmd.Flags().Changed("description") {
					body.Description = description
				}
				path = api.Pathf("/v1/acl/role/%s", args[0])
			}
			if !update || cmd.Flags().Changed("policy") {
				body.Policies = nil
				for _, p := range policies {
					body.Policies = append(body.Policies, api.ACLRolePolicyLink{Name: p})
				}
			}
			var r api.ACLRole
			if err := c.Put(cmd.Context(), path, body, &r); err != nil {
				return fmt.Errorf("%s ACL role: %w", use, err)
			}
			return printRole(cmd.OutOrStdout(), r, asJSON)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the role's name")
	cmd.Flags().StringVar(&description, "description", "", "the role's description")
	cmd.Flags().StringArrayVar(&policies, "policy", nil, "a policy the role links (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the role as JSON")
	return cmd
}

func printRole(w io.Writer, r api.ACLRole, asJSON bool) error {
	if asJSON {
		return printJSONValue(w, r)
	}
	var pols []string
	for _, p := range r.Policies {
		pols = append(pols, p.Name)
	}
	return printPairs(w, []pair{{"ID", r.ID}, {"Name", r.Name}, {"Description", orDash(r.Description)},
		{"Policies", strings.Join(pols, ", ")}, {"Create Index", fmt.Sprint(r.CreateIndex)}, {"Modify Index", fmt.Sprint(r.ModifyIndex)}})
}

func newACLRoleListCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Short: "List ACL roles", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/acl/roles", nil, "list ACL roles", asJSON, func(w io.Writer, list []api.ACLRole) error {
				if len(list) == 0 {
					_, err := fmt.Fprintln(w, "No ACL roles found")
					return err
				}
				rows := make([][]string, len(list))
				for i, r := range list {
					var pols []string
					for _, p := range r.Policies {
						pols = append(pols, p.Name)
					}
					rows[i] = []string{r.ID, r.Name, r.Description, strings.Join(pols, ",")}
				}
				return printTable(w, []string{"ID", "Name", "Description", "Policies"}, rows)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func newACLRoleInfoCommand(g *globals) *cobra.Command {
	var asJSON, byName bool
	cmd := &cobra.Command{
		Use: "info <id>", Short: "Show an ACL role (by name with -by-name)", Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := api.Pathf("/v1/acl/role/%s", args[0])
			if byName {
				path = api.Pathf("/v1/acl/role/name/%s", args[0])
			}
			return show(cmd, g, path, nil, "read ACL role", asJSON, func(w io.Writer, r api.ACLRole) error {
				return printRole(w, r, false)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	cmd.Flags().BoolVar(&byName, "by-name", false, "the argument is the role's name")
	return cmd
}

func newACLRoleDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "delete <id>", Short: "Delete an ACL role", Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteAndSay(cmd, g, api.Pathf("/v1/acl/role/%s", args[0]), "ACL role "+args[0])
		},
	}
}

func newACLTokenCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage ACL tokens"}
	cmd.AddCommand(newACLTokenWriteCommand(g, false), newACLTokenWriteCommand(g, true), newACLTokenListCommand(g),
		newACLTokenInfoCommand(g, false), newACLTokenInfoCommand(g, true), newACLTokenDeleteCommand(g))
	return cmd
}

// tokenBody is the body of a token create or update.
type tokenBody struct {
	AccessorID    string `json:",omitempty"`
	Name          string
	Type          string
	Policies      []string
	Roles         []api.ACLRoleLink
	Global        bool
	ExpirationTTL string `json:",omitempty"`
}

func newACLTokenWriteCommand(g *globals, update bool) *cobra.Command {
	var (
		name, typ          string
		policies, roleName []string
		roleID             []string
		global, asJSON     bool
		ttl                time.Duration
	)
	use, short, args := "create", "Create an ACL token (its secret is shown once)", cobra.NoArgs
	if update {
		use, short, args = "update <accessor>", "Update an ACL token (flags given replace those fields)", oneArg("<accessor>")
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			body := tokenBody{Name: name, Type: typ, Policies: policies, Global: global}
			path := "/v1/acl/token"
			if update {
				var old api.ACLToken
				if err := c.Get(cmd.Context(), api.Pathf("/v1/acl/token/%s", args[0]), nil, &old); err != nil {
					return fmt.Errorf("read ACL token %s: %w", args[0], err)
				}
				body = tokenBody{AccessorID: old.AccessorID, Name: old.Name, Type: old.Type, Policies: old.Policies,
					Roles: old.Roles, Global: old.Global}
				f := cmd.Flags()
				if f.Changed("name") {
					body.Name = name
				}
				if f.Changed("type") {
					body.Type = typ
				}
				if f.Changed("policy") {
					body.Policies = policies
				}
				if f.Changed("global") {
					body.Global = global
				}
				if f.Changed("role-name") || f.Changed("role-id") {
					body.Roles = nil
				}
				path = api.Pathf("/v1/acl/token/%s", args[0])
			}
			for _, n := range roleName {
				body.Roles = append(body.Roles, api.ACLRoleLink{Name: n})
			}
			for _, id := range roleID {
				body.Roles = append(body.Roles, api.ACLRoleLink{ID: id})
			}
			if ttl > 0 {
				body.ExpirationTTL = ttl.String()
			}
			var t api.ACLToken
			if err := c.Put(cmd.Context(), path, body, &t); err != nil {
				return fmt.Errorf("%s ACL token: %w", strings.Fields(use)[0], err)
			}
			return printToken(cmd.OutOrStdout(), t, asJSON)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the token's name")
	cmd.Flags().StringVar(&typ, "type", "client", "client or management")
	cmd.Flags().StringArrayVar(&policies, "policy", nil, "a policy the token links (repeatable)")
	cmd.Flags().StringArrayVar(&roleName, "role-name", nil, "a role the token links, by name (repeatable)")
	cmd.Flags().StringArrayVar(&roleID, "role-id", nil, "a role the token links, by id (repeatable)")
	cmd.Flags().BoolVar(&global, "global", false, "replicate the token to every region")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the token as JSON")
	if !update {
		cmd.Flags().DurationVar(&ttl, "ttl", 0, "the token expires this long after creation (8h)")
	}
	return cmd
}

func newACLTokenListCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Short: "List ACL tokens", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/acl/tokens", nil, "list ACL tokens", asJSON, func(w io.Writer, list []api.ACLToken) error {
				if len(list) == 0 {
					_, err := fmt.Fprintln(w, "No tokens found")
					return err
				}
				rows := make([][]string, len(list))
				for i, t := range list {
					exp := "-"
					if t.ExpirationTime != nil {
						exp = t.ExpirationTime.Format(time.RFC3339)
					}
					rows[i] = []string{t.Name, t.Type, fmt.Sprint(t.Global), t.AccessorID, exp}
				}
				return printTable(w, []string{"Name", "Type", "Global", "Accessor ID", "Expires"}, rows)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func newACLTokenInfoCommand(g *globals, self bool) *cobra.Command {
	var asJSON bool
	use, short, args := "info <accessor>", "Show an ACL token", oneArg("<accessor>")
	if self {
		use, short, args = "self", "Show the token this command runs with", cobra.NoArgs
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/v1/acl/token/self"
			if !self {
				path = api.Pathf("/v1/acl/token/%s", args[0])
			}
			return show(cmd, g, path, nil, "read ACL token", asJSON, func(w io.Writer, t api.ACLToken) error {
				return printToken(w, t, false)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func newACLTokenDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "delete <accessor>", Short: "Delete an ACL token", Args: oneArg("<accessor>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteAndSay(cmd, g, api.Pathf("/v1/acl/token/%s", args[0]), "ACL token "+args[0])
		},
	}
}
