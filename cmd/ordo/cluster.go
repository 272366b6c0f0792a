package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// newServerCommand is `ordo server`: Nomad's server members.
func newServerCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Inspect the cluster's servers",
	}
	var detailed bool
	members := &cobra.Command{
		Use:   "members",
		Short: "List the servers of the cluster as the addressed agent knows them",
		Args:  cobra.NoArgs,
	}
	out := addOutputFlags(members)
	members.Flags().BoolVar(&detailed, "detailed", false, "show every member's tags")
	members.RunE = func(cmd *cobra.Command, _ []string) error {
		return showWith(cmd, g, "/v1/agent/members", nil, "list server members", out, func(w io.Writer, m api.ServerMembers) error {
			return printMembers(w, m, detailed)
		})
	}
	cmd.AddCommand(members)
	return cmd
}

// printMembers writes the table of `ordo server members`, as Nomad's.
func printMembers(w io.Writer, m api.ServerMembers, detailed bool) error {
	if len(m.Members) == 0 {
		_, err := fmt.Fprintln(w, "No servers found")
		return err
	}
	rows := make([][]string, len(m.Members))
	for i, mem := range m.Members {
		t := mem.Tags
		if detailed {
			tags := ""
			for _, k := range slices.Sorted(maps.Keys(t)) {
				if tags != "" {
					tags += ","
				}
				tags += k + "=" + t[k]
			}
			rows[i] = []string{mem.Name, mem.Addr, strconv.Itoa(int(mem.Port)), mem.Status, tags}
			continue
		}
		rows[i] = []string{mem.Name, mem.Addr, strconv.Itoa(int(mem.Port)), mem.Status, t["leader"], t["raft_vsn"],
			orDash(t["build"]), t["dc"], t["region"]}
	}
	if detailed {
		return printTable(w, []string{"Name", "Address", "Port", "Status", "Tags"}, rows)
	}
	return printTable(w, []string{"Name", "Address", "Port", "Status", "Leader", "Raft Version", "Build", "Datacenter", "Region"}, rows)
}

// agentSelf is what `ordo agent-info` reads of /v1/agent/self.
type agentSelf struct {
	Stats map[string]map[string]string `json:"stats"`
}

// newAgentInfoCommand is `ordo agent-info`: the addressed agent's
// statistics, a section per subsystem, as Nomad's.
func newAgentInfoCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent-info",
		Short: "Show the addressed agent's statistics (raft, ordo) for debugging",
		Args:  cobra.NoArgs,
	}
	out := addOutputFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return showWith(cmd, g, "/v1/agent/self", nil, "read agent info", out, func(w io.Writer, s agentSelf) error {
			for _, section := range slices.Sorted(maps.Keys(s.Stats)) {
				fmt.Fprintln(w, section)
				for _, k := range slices.Sorted(maps.Keys(s.Stats[section])) {
					fmt.Fprintf(w, "  %s = %s\n", k, s.Stats[section][k])
				}
			}
			return nil
		})
	}
	return cmd
}
