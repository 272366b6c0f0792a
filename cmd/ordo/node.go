package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

func newNodeCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Interact with nodes",
	}
	cmd.AddCommand(newNodeStatusCommand(g), newNodeEligibilityCommand(g), newNodeDrainCommand(g))
	cmd.AddCommand(newNodePoolCommand(g)) // nodepool.go
	return cmd
}

func newNodeStatusCommand(g *globals) *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] [<id>]",
		Short: "List nodes, or show one by id or unique id prefix with its allocations",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return showOut(cmd, g, "/v1/nodes", nil, "list nodes", out, printNodeTable)
			}
			return showOut(cmd, g, api.Pathf("/v1/node/%s", args[0]), nil, fmt.Sprintf("read node %q", args[0]), out,
				func(w io.Writer, d display, n api.Node) error {
					if err := printNode(w, d, n); err != nil {
						return err
					}
					c, err := g.client()
					if err != nil {
						return err
					}
					var allocs []api.AllocationListStub
					if err := c.Get(cmd.Context(), api.Pathf("/v1/node/%s/allocations", n.ID), nil, &allocs); err != nil {
						return fmt.Errorf("allocations of node %q: %w", n.ID, err)
					}
					fmt.Fprintf(w, "\nAllocations\n")
					return printAllocTable(w, d, allocs, true) // jobstatus.go
				})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// printNodeTable writes the table of `ordo node status`: short ids unless
// -verbose.
func printNodeTable(w io.Writer, d display, list []api.NodeListStub) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No nodes registered")
		return err
	}
	rows := make([][]string, len(list))
	for i, n := range list {
		rows[i] = []string{d.id(n.ID), n.NodePool, n.Datacenter, n.Name, orDash(n.NodeClass),
			strconv.FormatBool(n.Drain), n.SchedulingEligibility, n.Status}
	}
	return printTable(w, []string{"ID", "Node Pool", "DC", "Name", "Class", "Drain", "Eligibility", "Status"}, rows)
}

// printNode writes the "Key = value" view of `ordo node status <id>`.
func printNode(w io.Writer, d display, n api.Node) error {
	drain := "false"
	if ds := n.DrainStrategy; ds != nil {
		switch {
		case ds.ForceDeadline.IsZero():
			drain = "true; no deadline"
		default:
			drain = "true; deadline " + d.timestamp(ds.ForceDeadline)
		}
		if ds.IgnoreSystemJobs {
			drain += "; ignoring system jobs"
		}
	}
	var drivers []string
	for _, name := range slices.Sorted(maps.Keys(n.Drivers)) {
		if d := n.Drivers[name]; d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	pairs := []pair{
		{"ID", d.id(n.ID)},
		{"Name", n.Name},
		{"Node Pool", n.NodePool},
		{"Class", orNone(n.NodeClass)},
		{"DC", n.Datacenter},
		{"HTTP Addr", orNone(n.HTTPAddr)},
		{"Drain", drain},
		{"Eligibility", n.SchedulingEligibility},
		{"Status", n.Status},
		{"Status Description", orNone(n.StatusDescription)},
		{"Status Updated", d.timestamp(time.Unix(n.StatusUpdatedAt, 0))},
		{"Drivers", orNone(strings.Join(drivers, ","))},
		{"CPU", fmt.Sprintf("%d MHz (%d reserved)", n.Resources.CPU, n.Reserved.CPU)},
		{"Memory", fmt.Sprintf("%s (%s reserved)", humanMiB(int64(n.Resources.MemoryMB)), humanMiB(int64(n.Reserved.MemoryMB)))},
		{"Disk", fmt.Sprintf("%s (%s reserved)", humanMiB(int64(n.Resources.DiskMB)), humanMiB(int64(n.Reserved.DiskMB)))},
		{"Addresses", orNone(nodeAddresses(n.Networks))},
		{"Dynamic Ports", dynamicPorts(n.MinDynamicPort, n.MaxDynamicPort)},
		{"Reserved Ports", orNone(n.ReservedPorts)},
		{"Host Volumes", orNone(hostVolumes(n.HostVolumes))},
		{"Create Index", strconv.FormatUint(n.CreateIndex, 10)},
		{"Modify Index", strconv.FormatUint(n.ModifyIndex, 10)},
	}
	if n.StatusUpdatedAt == 0 {
		pairs = slices.DeleteFunc(pairs, func(p pair) bool { return p.key == "Status Updated" })
	}
	err := printPairs(w, pairs)
	if err != nil || len(n.Attributes)+len(n.Meta) == 0 {
		return err
	}
	for _, section := range []struct {
		title string
		m     map[string]string
	}{{"Attributes", n.Attributes}, {"Meta", n.Meta}} {
		if len(section.m) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n%s\n", section.title); err != nil {
			return err
		}
		var pairs []pair
		for _, k := range slices.Sorted(maps.Keys(section.m)) {
			pairs = append(pairs, pair{k, section.m[k]})
		}
		if err := printPairs(w, pairs); err != nil {
			return err
		}
	}
	return nil
}

// resolveNode returns the full id of the node id or unique id prefix names.
func resolveNode(cmd *cobra.Command, c *api.Client, id string) (string, error) {
	var n api.NodeListStub
	if err := c.Get(cmd.Context(), api.Pathf("/v1/node/%s", id), nil, &n); err != nil {
		return "", fmt.Errorf("read node %q: %w", id, err)
	}
	return n.ID, nil
}

// enableDisable reads the -enable/-disable pair: exactly one must be set.
func enableDisable(enable, disable bool) (bool, error) {
	if enable == disable {
		return false, errors.New("exactly one of -enable and -disable is required")
	}
	return enable, nil
}

func newNodeEligibilityCommand(g *globals) *cobra.Command {
	var enable, disable bool
	cmd := &cobra.Command{
		Use:   "eligibility -enable|-disable <id>",
		Short: "Mark a node eligible or ineligible for new work",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, err := enableDisable(enable, disable)
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveNode(cmd, c, args[0])
			if err != nil {
				return err
			}
			elig := "ineligible"
			if on {
				elig = "eligible"
			}
			body := map[string]string{"NodeID": id, "Eligibility": elig}
			if err := c.Put(cmd.Context(), api.Pathf("/v1/node/%s/eligibility", id), body, nil); err != nil {
				return fmt.Errorf("update eligibility of node %q: %w", id, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Node %q scheduling eligibility set: %s for scheduling\n", id, elig)
			return err
		},
	}
	cmd.Flags().BoolVar(&enable, "enable", false, "make the node eligible")
	cmd.Flags().BoolVar(&disable, "disable", false, "make the node ineligible")
	return cmd
}

// drainSpec is the body's DrainSpec of POST /v1/node/<id>/drain.
type drainSpec struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// drainBody is the body of POST /v1/node/<id>/drain.
type drainBody struct {
	NodeID       string
	DrainSpec    *drainSpec
	MarkEligible bool
}

func newNodeDrainCommand(g *globals) *cobra.Command {
	var (
		enable, disable, noDeadline, force, ignoreSystem, keepIneligible bool
		deadline                                                         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "drain -enable|-disable [flags] <id>",
		Short: "Start or stop draining a node",
		Long: `Start or stop draining a node.

A draining node is ineligible for new work. -disable stops the drain and
makes the node eligible again unless -keep-ineligible is given.`,
		Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, err := enableDisable(enable, disable)
			if err != nil {
				return err
			}
			body := drainBody{MarkEligible: !on && !keepIneligible}
			if on {
				spec := &drainSpec{Deadline: deadline, IgnoreSystemJobs: ignoreSystem}
				switch {
				case noDeadline && force:
					return errors.New("-no-deadline and -force exclude each other")
				case noDeadline:
					spec.Deadline = 0
				case force:
					spec.Deadline = -1
				case deadline <= 0:
					return fmt.Errorf("invalid -deadline %v: must be positive (use -no-deadline or -force)", deadline)
				}
				body.DrainSpec = spec
			} else if cmd.Flags().Changed("deadline") || noDeadline || force || ignoreSystem {
				return errors.New("-deadline, -no-deadline, -force and -ignore-system apply only with -enable")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if body.NodeID, err = resolveNode(cmd, c, args[0]); err != nil {
				return err
			}
			if err := c.Put(cmd.Context(), api.Pathf("/v1/node/%s/drain", body.NodeID), body, nil); err != nil {
				return fmt.Errorf("update drain of node %q: %w", body.NodeID, err)
			}
			verb := "disabled"
			if on {
				verb = "enabled"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Node %q drain strategy %s\n", body.NodeID, verb)
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&enable, "enable", false, "start draining")
	f.BoolVar(&disable, "disable", false, "stop draining")
	f.DurationVar(&deadline, "deadline", time.Hour, "how long allocations may take to migrate before they are stopped")
	f.BoolVar(&noDeadline, "no-deadline", false, "drain without a deadline")
	f.BoolVar(&force, "force", false, "stop every allocation at once")
	f.BoolVar(&ignoreSystem, "ignore-system", false, "leave system jobs' allocations running")
	f.BoolVar(&keepIneligible, "keep-ineligible", false, "with -disable: leave the node ineligible")
	return cmd
}

// nodeAddresses lists a node's host networks as name=address.
func nodeAddresses(nets []events.NodeNetwork) string {
	out := make([]string, len(nets))
	for i, nw := range nets {
		out[i] = nw.Name + "=" + nw.Address
	}
	return strings.Join(out, ",")
}

// dynamicPorts writes a node's dynamic port range; zero bounds are the
// defaults.
func dynamicPorts(lo, hi int) string {
	if lo <= 0 {
		lo = events.DefaultMinDynamicPort
	}
	if hi <= 0 {
		hi = events.DefaultMaxDynamicPort
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// hostVolumes lists a node's host volumes as name:path, "(read-only)"
// marked, sorted by name.
func hostVolumes(vols map[string]*events.ClientHostVolume) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		v := name + ":" + vols[name].Path
		if vols[name].ReadOnly {
			v += " (read-only)"
		}
		out = append(out, v)
	}
	return strings.Join(out, ",")
}
