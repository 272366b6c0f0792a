package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// The launcher's CLI: ordo provider, ordo node-request, ordo instance
// (docs/launcher.md).

// cliProvider is a provider as GET /v1/provider/<name> answers it.
type cliProvider struct {
	Name   string
	Config struct {
		Driver   string
		Priority int
		Pools    []struct {
			Name                           string
			MaxServers, MaxCores, MaxRAMMB int
			Labels                         []string
		}
	}
	ConfigIndex   uint64
	Paused        bool
	PausedRequest string
	PauseReason   string
	ErroredLabels map[string]string
	Used          struct{ Servers, Cores, RAMMB int }
	Free          *struct{ Servers, Cores, RAMMB int }
	States        map[string]int
}

type cliRequest struct {
	ID, State, Requestor, Tenant, Provider, Pool, Reason string
	Labels                                               []string
	DeclinedBy                                           []struct{ Provider, Reason string }
	Instances                                            []string
}

type cliInstance struct {
	ID, Provider, Pool, Label, State, Requestor, RequestID, ExternalID string
	Attributes                                                         map[string]string
}

func newProviderCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "provider", Short: "Manage launcher providers"}
	apply := &cobra.Command{
		Use:   "apply <file.hcl>",
		Short: "Apply a provider file (a new configuration is a new provider generation)",
		Args:  oneArg("<file.hcl>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("read provider file: %w", err)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			var out struct{ Index uint64 }
			if err := c.Put(cmd.Context(), "/v1/providers", map[string]string{"HCL": string(src), "Filename": filepath.Base(args[0])}, &out); err != nil {
				return fmt.Errorf("apply provider: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Applied provider file %s (index %d)\n", args[0], out.Index)
			return err
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List providers", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/providers", nil, "list providers", asJSON, func(w io.Writer, ps []cliProvider) error {
				rows := make([][]string, len(ps))
				for i, p := range ps {
					rows[i] = []string{p.Name, p.Config.Driver, strconv.Itoa(p.Config.Priority), strconv.FormatBool(p.Paused),
						strconv.Itoa(p.Used.Servers), strconv.Itoa(p.Used.Cores)}
				}
				return printTable(w, []string{"Name", "Driver", "Priority", "Paused", "Instances", "Cores"}, rows)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(list)
	status := &cobra.Command{
		Use: "status <name>", Short: "Show a provider: pools, labels, quota used and free, paused, errored labels", Args: oneArg("<name>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, g, api.Pathf("/v1/provider/%s", args[0]), nil, "read provider", asJSON, printProvider)
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(status)
	cmd.AddCommand(apply, list, status, newPoolsCommand(g))
	return cmd
}

// cliComponent is a component as GET /v1/components answers it.
type cliComponent struct {
	Kind, Server string
	Pools        []struct {
		Provider, Pool, Driver string
		ConfigIndex            uint64
		Priority               int
		Labels                 []string
	}
	// Status and LastHeartbeat are its liveness as the leader holds it.
	Status        string
	LastHeartbeat *time.Time
}

// newPoolsCommand is `ordo provider pools`: the pools each server's
// launcher runs, as registered components (P10).
func newPoolsCommand(g *globals) *cobra.Command {
	var asJSON bool
	pools := &cobra.Command{
		Use: "pools", Short: "List the pools each server's launcher runs (its registered component)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{"kind": {"launcher"}}
			return show(cmd, g, "/v1/components", q, "list launcher components", asJSON, func(w io.Writer, cs []cliComponent) error {
				var rows [][]string
				for _, c := range cs {
					beat := "-"
					if c.LastHeartbeat != nil {
						beat = c.LastHeartbeat.UTC().Format(time.RFC3339)
					}
					for _, p := range c.Pools {
						rows = append(rows, []string{c.Server, p.Provider, p.Pool, p.Driver, strconv.Itoa(p.Priority),
							strconv.FormatUint(p.ConfigIndex, 10), strings.Join(p.Labels, ","), c.Status, beat})
					}
				}
				return printTable(w, []string{"Server", "Provider", "Pool", "Driver", "Priority", "Generation", "Labels", "Status",
					"Last Heartbeat"}, rows)
			})
		},
	}
	pools.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(pools)
	return pools
}

func printProvider(w io.Writer, p cliProvider) error {
	pairs := []pair{{"Name", p.Name}, {"Driver", p.Config.Driver}, {"Priority", strconv.Itoa(p.Config.Priority)},
		{"Generation", strconv.FormatUint(p.ConfigIndex, 10)}, {"Paused", strconv.FormatBool(p.Paused)}}
	if p.Paused {
		pairs = append(pairs, pair{"Paused For", p.PausedRequest + " (" + p.PauseReason + ")"})
	}
	pairs = append(pairs, pair{"Used", fmt.Sprintf("%d instances, %d cores, %s", p.Used.Servers, p.Used.Cores, humanMiB(int64(p.Used.RAMMB)))})
	if p.Free != nil {
		// A negative free count is a dimension the quota does not bound.
		count := func(n int) string {
			if n < 0 {
				return "unlimited"
			}
			return strconv.Itoa(n)
		}
		pairs = append(pairs, pair{"Free (quota)", fmt.Sprintf("%s instances, %s cores, %s", count(p.Free.Servers), count(p.Free.Cores),
			humanMiB(int64(p.Free.RAMMB)))})
	}
	var states []string
	for _, s := range slices.Sorted(maps.Keys(p.States)) {
		states = append(states, fmt.Sprintf("%s=%d", s, p.States[s]))
	}
	pairs = append(pairs, pair{"Instances", orNone(strings.Join(states, " "))})
	for _, l := range slices.Sorted(maps.Keys(p.ErroredLabels)) {
		pairs = append(pairs, pair{"Errored Label " + l, p.ErroredLabels[l]})
	}
	if err := printPairs(w, pairs); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "\nPools"); err != nil {
		return err
	}
	rows := make([][]string, len(p.Config.Pools))
	for i, pl := range p.Config.Pools {
		rows[i] = []string{pl.Name, strings.Join(pl.Labels, ","), strconv.Itoa(pl.MaxServers), strconv.Itoa(pl.MaxCores)}
	}
	return printTable(w, []string{"Name", "Labels", "Max Servers", "Max Cores"}, rows)
}

func newNodeRequestCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "node-request", Short: "Create and inspect node requests"}
	var labels []string
	var requestor, tenant string
	var prio int
	create := &cobra.Command{
		Use: "create", Short: "Request one instance per -label", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var out struct{ ID string }
			body := map[string]any{"Labels": labels, "Requestor": requestor, "Tenant": tenant, "RelativePriority": prio}
			if err := c.Put(cmd.Context(), "/v1/node-requests", body, &out); err != nil {
				return fmt.Errorf("create node request: %w", err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), out.ID)
			return err
		},
	}
	create.Flags().StringArrayVar(&labels, "label", nil, "a label to request an instance of; repeatable")
	create.Flags().StringVar(&requestor, "requestor", "", "who asks (default: the caller)")
	create.Flags().StringVar(&tenant, "tenant", "", "the tenant whose limits apply")
	create.Flags().IntVar(&prio, "priority", 0, "relative priority: lower is handled first")
	var asJSON bool
	status := &cobra.Command{
		Use: "status <id>", Short: "Show a node request", Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, g, api.Pathf("/v1/node-request/%s", args[0]), nil, "read node request", asJSON, func(w io.Writer, r cliRequest) error {
				pairs := []pair{{"ID", r.ID}, {"State", r.State}, {"Labels", strings.Join(r.Labels, ", ")},
					{"Requestor", orNone(r.Requestor)}, {"Tenant", orNone(r.Tenant)}, {"Provider", orNone(r.Provider)},
					{"Instances", orNone(strings.Join(r.Instances, ", "))}, {"Reason", orNone(r.Reason)}}
				for _, d := range r.DeclinedBy {
					pairs = append(pairs, pair{"Declined By " + d.Provider, d.Reason})
				}
				return printPairs(w, pairs)
			})
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(status)
	list := &cobra.Command{
		Use: "list", Short: "List node requests", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/node-requests", nil, "list node requests", asJSON, func(w io.Writer, rs []cliRequest) error {
				rows := make([][]string, len(rs))
				for i, r := range rs {
					rows[i] = []string{r.ID, r.State, strings.Join(r.Labels, ","), r.Requestor, r.Provider}
				}
				return printTable(w, []string{"ID", "State", "Labels", "Requestor", "Provider"}, rows)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(list)
	cmd.AddCommand(create, status, list)
	return cmd
}

func newInstanceCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "instance", Short: "List, hold and delete launched instances"}
	var asJSON bool
	var provider, state string
	list := &cobra.Command{
		Use: "list", Short: "List instances", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if provider != "" {
				q.Set("provider", provider)
			}
			if state != "" {
				q.Set("state", state)
			}
			return show(cmd, g, "/v1/instances", q, "list instances", asJSON, func(w io.Writer, is []cliInstance) error {
				rows := make([][]string, len(is))
				for i, in := range is {
					var attrs []string
					for _, k := range slices.Sorted(maps.Keys(in.Attributes)) {
						attrs = append(attrs, k+"="+in.Attributes[k])
					}
					rows[i] = []string{in.ID, in.Provider + "/" + in.Pool, in.Label, in.State, in.Requestor, strings.Join(attrs, ",")}
				}
				return printTable(w, []string{"ID", "Provider/Pool", "Label", "State", "Requestor", "Attributes"}, rows)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(list)
	list.Flags().StringVar(&provider, "provider", "", "only this provider's instances")
	list.Flags().StringVar(&state, "state", "", "only instances in this state")
	hold := &cobra.Command{
		Use: "hold <id>", Short: "Hold an instance: never reused nor deleted", Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Put(cmd.Context(), api.Pathf("/v1/instance/%s/hold", args[0]), nil, nil); err != nil {
				return fmt.Errorf("hold instance: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Instance %s held\n", args[0])
			return err
		},
	}
	del := &cobra.Command{
		Use: "delete <id>", Short: "Delete an instance (its provider removes it)", Args: oneArg("<id>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), api.Pathf("/v1/instance/%s", args[0]), nil); err != nil {
				return fmt.Errorf("delete instance: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Instance %s marked for deletion\n", args[0])
			return err
		},
	}
	cmd.AddCommand(list, hold, del)
	return cmd
}
