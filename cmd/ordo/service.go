package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// newServiceCommand is `ordo service`: Nomad-native service discovery
// (docs/services.md), as Nomad's `nomad service`.
func newServiceCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Interact with registered services (Nomad-native service discovery)",
	}
	cmd.PersistentFlags().String("namespace", g.env("NAMESPACE"),
		"namespace of the services ($ORDO_NAMESPACE, $NOMAD_NAMESPACE; default \"default\"; list takes \"*\")")
	cmd.AddCommand(newServiceListCommand(g), newServiceInfoCommand(g), newServiceDeleteCommand(g))
	return cmd
}

// serviceQuery returns the namespace parameter of cmd's -namespace flag.
func serviceQuery(cmd *cobra.Command) url.Values {
	q := url.Values{}
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		q.Set("namespace", ns)
	}
	return q
}

func newServiceListCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List services and their tags",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := serviceQuery(cmd)
			return showOut(cmd, g, "/v1/services", q, "list services", out, func(w io.Writer, _ display, list []api.ServiceList) error {
				return printServiceList(w, list, q.Get("namespace") == "*")
			})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// printServiceList writes the table of `ordo service list`, with a
// namespace column when every namespace is listed.
func printServiceList(w io.Writer, list []api.ServiceList, allNamespaces bool) error {
	var rows [][]string
	for _, l := range list {
		for _, s := range l.Services {
			tags := "[" + strings.Join(s.Tags, ",") + "]"
			if allNamespaces {
				rows = append(rows, []string{s.ServiceName, l.Namespace, tags})
			} else {
				rows = append(rows, []string{s.ServiceName, tags})
			}
		}
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No services found")
		return err
	}
	header := []string{"Service Name", "Tags"}
	if allNamespaces {
		header = []string{"Service Name", "Namespace", "Tags"}
	}
	return printTable(w, header, rows)
}

func newServiceInfoCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "info [flags] <name>",
		Short: "Show the instances of a service",
		Long: `Show the registered instances of a service: the job, address, tags,
node and allocation of each. -verbose shows every field of each instance,
with its checks' statuses and full ids.`,
		Args: oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showOut(cmd, g, api.Pathf("/v1/service/%s", args[0]), serviceQuery(cmd),
				fmt.Sprintf("read service %q", args[0]), out, func(w io.Writer, d display, list []api.ServiceRegistration) error {
					return printServiceInfo(w, d, list)
				})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// printServiceInfo writes `ordo service info`: a table of instances, or
// under -verbose one block of fields per instance.
func printServiceInfo(w io.Writer, d display, list []api.ServiceRegistration) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No service registrations found")
		return err
	}
	if !d.verbose {
		rows := make([][]string, len(list))
		for i, s := range list {
			rows[i] = []string{s.JobID, serviceAddr(s), "[" + strings.Join(s.Tags, ",") + "]", d.id(s.NodeID), d.id(s.AllocID)}
		}
		return printTable(w, []string{"Job ID", "Address", "Tags", "Node ID", "Alloc ID"}, rows)
	}
	for i, s := range list {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		checks := make([]string, 0, len(s.Checks))
		for _, c := range s.Checks {
			checks = append(checks, c.Name+"="+c.Status)
		}
		err := printPairs(w, []pair{{"ID", s.ID}, {"Service Name", s.ServiceName}, {"Namespace", s.Namespace},
			{"Job ID", s.JobID}, {"Alloc ID", s.AllocID}, {"Node ID", s.NodeID}, {"Datacenter", orNone(s.Datacenter)},
			{"Address", serviceAddr(s)}, {"Tags", "[" + strings.Join(s.Tags, ",") + "]"},
			{"Checks", orNone(strings.Join(checks, ", "))},
			{"Create Index", strconv.FormatUint(s.CreateIndex, 10)}, {"Modify Index", strconv.FormatUint(s.ModifyIndex, 10)}})
		if err != nil {
			return err
		}
	}
	return nil
}

// serviceAddr is an instance's address:port.
func serviceAddr(s api.ServiceRegistration) string {
	return s.Address + ":" + strconv.Itoa(s.Port)
}

func newServiceDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete [flags] <name> <id>",
		Short: "Delete one instance of a service",
		Long: `Delete one registered instance of a service, by its registration id
(ordo service info -verbose shows it). The client that registered it
registers it again while its allocation runs, as Nomad's does.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			ns, _ := cmd.Flags().GetString("namespace")
			if err := c.DeleteService(cmd.Context(), ns, args[0], args[1]); err != nil {
				return fmt.Errorf("delete service %q instance %q: %w", args[0], args[1], err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "Successfully deleted service registration")
			return err
		},
	}
}
