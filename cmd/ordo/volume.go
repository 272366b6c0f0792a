package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/csi"
)

// cliVolume is a volume as GET /v1/volume/csi/<id> answers it.
type cliVolume struct {
	ID, Name, Namespace, ExternalID, PluginID, Provider, ProviderVersion string
	AccessMode, AttachmentMode                                           string
	RequestedCapabilities                                                []struct{ AccessMode, AttachmentMode string }
	Schedulable                                                          bool
	ControllerRequired                                                   bool
	ControllersHealthy, ControllersExpected, NodesHealthy, NodesExpected int
	Capacity                                                             int64
	Allocations                                                          []api.AllocationListStub
	ReadClaims, WriteClaims                                              map[string]cliClaim
	CreateIndex, ModifyIndex                                             uint64
}

type cliClaim struct {
	AllocationID, NodeID, JobID, Mode, AccessMode, AttachmentMode, State string
}

func newVolumeCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "volume", Short: "Interact with CSI volumes"}
	cmd.PersistentFlags().String("namespace", g.env("NAMESPACE"), "namespace of the volumes ($ORDO_NAMESPACE, $NOMAD_NAMESPACE; default \"default\"; '*' for all in status)")
	cmd.AddCommand(newVolumeRegisterCommand(g), newVolumeCreateCommand(g), newVolumeStatusCommand(g), newVolumeDeregisterCommand(g), newVolumeDeleteCommand(g), newVolumeDetachCommand(g))
	return cmd
}

func nsQuery(cmd *cobra.Command) url.Values {
	q := url.Values{}
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		q.Set("namespace", ns)
	}
	return q
}

func newVolumeRegisterCommand(g *globals) *cobra.Command {
	return volumeSpecCommand(g, "register", "", "registered",
		"Register a CSI volume; registering it again merges the changes (N18)")
}

func newVolumeCreateCommand(g *globals) *cobra.Command {
	return volumeSpecCommand(g, "create", "/create", "created",
		"Create a CSI volume through its plugin's controller, then register it")
}

// volumeSpecCommand is register or create: parse the file, PUT it.
func volumeSpecCommand(g *globals, use, suffix, done, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use + " <file.hcl|file.json>",
		Short: short,
		Args:  oneArg("<file>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read volume file: %w", err)
			}
			spec, err := csi.ParseSpec(filepath.Base(args[0]), src)
			if err != nil {
				return fmt.Errorf("volume file %s: %w", args[0], err)
			}
			if ns, _ := cmd.Flags().GetString("namespace"); ns != "" && spec.Volume.Namespace == "default" {
				spec.Volume.Namespace = ns
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var out struct{ Index uint64 }
			q := url.Values{"namespace": {spec.Volume.Namespace}}
			if err := c.Call(cmd.Context(), "PUT", api.Pathf("/v1/volume/csi/%s", spec.Volume.ID)+suffix, q, spec.Body(), &out); err != nil {
				return fmt.Errorf("%s volume %q: %w", use, spec.Volume.ID, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Volume %q %s (index %d)\n", spec.Volume.ID, done, out.Index)
			return err
		},
	}
}

func newVolumeStatusCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [flags] [prefix]",
		Short: "List volumes, or show the one volume the id or prefix names",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := nsQuery(cmd)
			q.Set("type", "csi")
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
				q.Set("prefix", prefix)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var list []api.CSIVolumeListStub
			if err := c.Get(cmd.Context(), "/v1/volumes", q, &list); err != nil {
				return fmt.Errorf("list volumes: %w", err)
			}
			if v, ok := pickOne(list, prefix, func(v api.CSIVolumeListStub) string { return v.ID }); ok {
				dq := url.Values{"namespace": {v.Namespace}}
				out := &outputFlags{json: asJSON, template: templateFlag(cmd)}
				return showOut(cmd, g, api.Pathf("/v1/volume/csi/%s", v.ID), dq, "read volume", out, printVolume)
			}
			return show(cmd, g, "/v1/volumes", q, "list volumes", asJSON, printVolumes)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

// pickOne returns the item a status command's prefix names: the only
// match, or the one whose id is exactly the prefix among several.
func pickOne[T any](list []T, prefix string, id func(T) string) (T, bool) {
	var zero T
	if prefix == "" {
		return zero, false
	}
	if len(list) == 1 {
		return list[0], true
	}
	if i := slices.IndexFunc(list, func(x T) bool { return id(x) == prefix }); i >= 0 {
		return list[i], true
	}
	return zero, false
}

func printVolumes(w io.Writer, list []api.CSIVolumeListStub) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No CSI volumes")
		return err
	}
	rows := make([][]string, len(list))
	for i, v := range list {
		rows[i] = []string{v.ID, v.Name, v.Namespace, v.PluginID, strconv.FormatBool(v.Schedulable),
			orDash(v.AccessMode), strconv.Itoa(v.CurrentReaders), strconv.Itoa(v.CurrentWriters)}
	}
	return printTable(w, []string{"ID", "Name", "Namespace", "Plugin ID", "Schedulable", "Access Mode", "Readers", "Writers"}, rows)
}

// printVolume shows a volume, its claims and its allocations newest first
// (N16), allocation and node ids short unless -verbose.
func printVolume(w io.Writer, d display, v cliVolume) error {
	modes := ""
	for i, c := range v.RequestedCapabilities {
		if i > 0 {
			modes += ", "
		}
		modes += c.AccessMode + "/" + c.AttachmentMode
	}
	err := printPairs(w, []pair{{"ID", v.ID}, {"Name", orDash(v.Name)}, {"Namespace", v.Namespace},
		{"External ID", orDash(v.ExternalID)}, {"Plugin ID", v.PluginID}, {"Provider", orDash(v.Provider)},
		{"Version", orDash(v.ProviderVersion)}, {"Capabilities", orDash(modes)},
		{"Schedulable", strconv.FormatBool(v.Schedulable)},
		{"Controllers Healthy", fmt.Sprintf("%d/%d", v.ControllersHealthy, v.ControllersExpected)},
		{"Nodes Healthy", fmt.Sprintf("%d/%d", v.NodesHealthy, v.NodesExpected)},
		{"Capacity", strconv.FormatInt(v.Capacity, 10)}})
	if err != nil {
		return err
	}
	var claims []cliClaim
	for _, m := range []map[string]cliClaim{v.WriteClaims, v.ReadClaims} {
		for _, c := range m {
			claims = append(claims, c)
		}
	}
	if len(claims) > 0 {
		slices.SortFunc(claims, func(a, b cliClaim) int { return cmpStr(a.AllocationID, b.AllocationID) })
		fmt.Fprintln(w, "\nClaims")
		rows := make([][]string, len(claims))
		for i, c := range claims {
			rows[i] = []string{d.id(c.AllocationID), d.id(c.NodeID), c.Mode, c.AccessMode, c.State}
		}
		if err := printTable(w, []string{"Alloc ID", "Node ID", "Mode", "Access Mode", "State"}, rows); err != nil {
			return err
		}
	}
	return printCSIAllocs(w, d, v.Allocations)
}

// printCSIAllocs lists allocations as the server ordered them (newest
// modify index first, N16), ids short unless -verbose.
func printCSIAllocs(w io.Writer, d display, list []api.AllocationListStub) error {
	fmt.Fprintln(w, "\nAllocations")
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No allocations placed")
		return err
	}
	rows := make([][]string, len(list))
	for i, a := range list {
		rows[i] = []string{d.id(a.ID), d.id(a.NodeID), a.JobID, a.TaskGroup, strconv.FormatUint(a.JobVersion, 10), a.DesiredStatus, a.ClientStatus,
			strconv.FormatUint(a.ModifyIndex, 10)}
	}
	return printTable(w, []string{"ID", "Node ID", "Job ID", "Task Group", "Version", "Desired", "Status", "Modify Index"}, rows)
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func newVolumeDeregisterCommand(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "deregister [flags] <id>",
		Short: "Deregister the volume with exactly this id (never a prefix, N19)",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q := nsQuery(cmd)
			if force {
				q.Set("force", "true")
			}
			var out struct{ Index uint64 }
			if err := c.Call(cmd.Context(), "DELETE", api.Pathf("/v1/volume/csi/%s", args[0]), q, nil, &out); err != nil {
				return fmt.Errorf("deregister volume %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Volume %q deregistered (index %d)\n", args[0], out.Index)
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "deregister even while allocations claim the volume")
	return cmd
}

func newVolumeDeleteCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete [flags] <id>",
		Short: "Delete the volume with exactly this id through its plugin's controller, then deregister it",
		Args:  oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var out struct{ Index uint64 }
			if err := c.Call(cmd.Context(), "DELETE", api.Pathf("/v1/volume/csi/%s/delete", args[0]), nsQuery(cmd), nil, &out); err != nil {
				return fmt.Errorf("delete volume %q: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Volume %q deleted (index %d)\n", args[0], out.Index)
			return err
		},
	}
}

func newVolumeDetachCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "detach [flags] <id> <node id>",
		Short: "Release the volume's claims on a node whose allocations stopped",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q := nsQuery(cmd)
			q.Set("node", args[1])
			var out struct{ Index uint64 }
			if err := c.Call(cmd.Context(), "PUT", api.Pathf("/v1/volume/csi/%s/detach", args[0]), q, nil, &out); err != nil {
				return fmt.Errorf("detach volume %q from %s: %w", args[0], args[1], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Volume %q detaching from node %s (index %d)\n", args[0], args[1], out.Index)
			return err
		},
	}
}
