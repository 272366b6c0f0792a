package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// cliPlugin is a plugin as GET /v1/plugin/csi/<id> answers it.
type cliPlugin struct {
	ID, Provider, Version                                                string
	ControllerRequired                                                   bool
	ControllersHealthy, ControllersExpected, NodesHealthy, NodesExpected int
	Controllers, Nodes                                                   map[string]struct {
		Healthy        bool
		ControllerInfo *struct{ Capabilities []string }
		NodeInfo       *struct{ Capabilities []string }
	}
	Allocations []api.AllocationListStub
}

func newPluginCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "plugin", Short: "Inspect CSI plugins"}
	var (
		asJSON bool
		typ    string
	)
	status := &cobra.Command{
		Use:   "status [flags] [prefix]",
		Short: "List plugins, or show the one plugin the id or prefix names (N19)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{"type": {typ}}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
				q.Set("prefix", prefix)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var list []api.CSIPluginListStub
			if err := c.Get(cmd.Context(), "/v1/plugins", q, &list); err != nil {
				return fmt.Errorf("list plugins: %w", err)
			}
			if p, ok := pickOne(list, prefix, func(p api.CSIPluginListStub) string { return p.ID }); ok { // volume.go
				out := &outputFlags{json: asJSON, template: templateFlag(cmd)}
				return showOut(cmd, g, api.Pathf("/v1/plugin/csi/%s", p.ID), nil, "read plugin", out, printPlugin)
			}
			return show(cmd, g, "/v1/plugins", q, "list plugins", asJSON, printPlugins)
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(status)
	status.Flags().StringVar(&typ, "type", "csi", "plugin type (csi)")
	cmd.AddCommand(status)
	return cmd
}

func printPlugins(w io.Writer, list []api.CSIPluginListStub) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No CSI plugins")
		return err
	}
	rows := make([][]string, len(list))
	for i, p := range list {
		rows[i] = []string{p.ID, orDash(p.Provider), fmt.Sprintf("%d/%d", p.ControllersHealthy, p.ControllersExpected),
			fmt.Sprintf("%d/%d", p.NodesHealthy, p.NodesExpected)}
	}
	return printTable(w, []string{"ID", "Provider", "Controllers Healthy/Expected", "Nodes Healthy/Expected"}, rows)
}

// printPlugin shows a plugin, its capabilities sorted and its allocations
// newest first (N16), ids short unless -verbose.
func printPlugin(w io.Writer, d display, p cliPlugin) error {
	var caps []string
	for _, in := range p.Controllers {
		if in.ControllerInfo != nil {
			caps = append(caps, in.ControllerInfo.Capabilities...)
		}
	}
	for _, in := range p.Nodes {
		if in.NodeInfo != nil {
			caps = append(caps, in.NodeInfo.Capabilities...)
		}
	}
	slices.Sort(caps)
	caps = slices.Compact(caps)
	err := printPairs(w, []pair{{"ID", p.ID}, {"Provider", orDash(p.Provider)}, {"Version", orDash(p.Version)},
		{"Controllers Healthy", strconv.Itoa(p.ControllersHealthy)}, {"Controllers Expected", strconv.Itoa(p.ControllersExpected)},
		{"Nodes Healthy", strconv.Itoa(p.NodesHealthy)}, {"Nodes Expected", strconv.Itoa(p.NodesExpected)},
		{"Capabilities", orDash(strings.Join(caps, ", "))}})
	if err != nil {
		return err
	}
	return printCSIAllocs(w, d, p.Allocations)
}
