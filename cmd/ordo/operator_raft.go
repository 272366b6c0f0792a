package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/httpapi"
)

// membershipClient returns an API client that also presents the cluster
// secret from -cluster-secret or $ORDO_CLUSTER_SECRET, when one is given:
// with ACLs off, changing the servers needs it; with ACLs on, a management
// token (-token) does instead.
func membershipClient(g *globals, secret string) (*api.Client, error) {
	if secret == "" {
		secret = os.Getenv(clusterSecretEnv)
	}
	if secret == "" {
		return g.client()
	}
	return g.client(api.WithHeader(httpapi.ClusterSecretHeader, secret))
}

func newRaftRemovePeerCommand(g *globals) *cobra.Command {
	var id, secret string
	cmd := &cobra.Command{
		Use:   "remove-peer -peer-id <id>",
		Short: "Remove a server from the raft configuration (refused when the rest would have no quorum)",
		Long: `Remove a server, such as a dead one, from the raft configuration. The
leader refuses when the voters left would not hold a healthy quorum or
when the server is the last voter. Needs the cluster secret
(-cluster-secret or $ORDO_CLUSTER_SECRET) or, with ACLs on, a
management token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id == "" {
				return fmt.Errorf("-peer-id is required (ordo operator raft list-peers shows the ids)")
			}
			c, err := membershipClient(g, secret)
			if err != nil {
				return err
			}
			if err := c.Call(cmd.Context(), "DELETE", "/v1/operator/raft/peer", url.Values{"id": {id}}, nil, nil); err != nil {
				return fmt.Errorf("remove peer %s: %w", id, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Removed peer with id %q\n", id)
			return err
		},
	}
	cmd.Flags().StringVar(&id, "peer-id", "", "raft id of the server to remove")
	cmd.Flags().StringVar(&secret, "cluster-secret", "", "the cluster secret (default $ORDO_CLUSTER_SECRET)")
	return cmd
}

func newRaftTransferLeadershipCommand(g *globals) *cobra.Command {
	var id, addr, secret string
	cmd := &cobra.Command{
		Use:   "transfer-leadership [-peer-id <id> | -peer-address <host:port>]",
		Short: "Hand leadership to another voter (the most up-to-date one by default)",
		Long: `Hand the leader's role to another voter and wait until it leads: a
short pause for writes instead of an election timeout. Without a peer,
raft picks the most up-to-date voter. Needs the cluster secret
(-cluster-secret or $ORDO_CLUSTER_SECRET) or, with ACLs on, a
management token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id != "" && addr != "" {
				return fmt.Errorf("pass -peer-id or -peer-address, not both")
			}
			c, err := membershipClient(g, secret)
			if err != nil {
				return err
			}
			q := url.Values{}
			if id != "" {
				q.Set("id", id)
			}
			if addr != "" {
				q.Set("address", addr)
			}
			var out struct{ From, Leader string }
			if err := c.Call(cmd.Context(), "PUT", "/v1/operator/raft/transfer-leadership", q, nil, &out); err != nil {
				return fmt.Errorf("transfer leadership: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Transferred leadership from %s to %s\n", out.From, out.Leader)
			return err
		},
	}
	cmd.Flags().StringVar(&id, "peer-id", "", "raft id of the voter to hand leadership to")
	cmd.Flags().StringVar(&addr, "peer-address", "", "raft address of the voter to hand leadership to")
	cmd.Flags().StringVar(&secret, "cluster-secret", "", "the cluster secret (default $ORDO_CLUSTER_SECRET)")
	return cmd
}

// autopilotHealth is the answer of GET /v1/operator/autopilot/health.
type autopilotHealth struct {
	Healthy          bool
	FailureTolerance int
	Leader           string
	Voters           []string
	Servers          []struct {
		ID, Name, Address, SerfStatus, Status string
		Leader, Voter, Healthy                bool
		LastContact                           string
		LastTerm, LastIndex                   uint64
	}
}

func newAutopilotCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "autopilot",
		Short: "Inspect autopilot: the servers' health and its configuration",
	}
	var asJSON bool
	health := &cobra.Command{
		Use:   "health",
		Short: "Show every server's health as the leader's autopilot judges it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/operator/autopilot/health", nil, "read autopilot health", asJSON, printAutopilotHealth)
		},
	}
	health.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	var confJSON bool
	conf := &cobra.Command{
		Use:   "get-config",
		Short: "Show autopilot's configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/operator/autopilot/configuration", nil, "read autopilot configuration", confJSON,
				func(w io.Writer, c map[string]any) error {
					var pairs []pair
					for _, k := range []string{"CleanupDeadServers", "LastContactThreshold", "MaxTrailingLogs", "MinQuorum",
						"ServerStabilizationTime", "DeadServerLastContactThreshold"} {
						pairs = append(pairs, pair{k, fmt.Sprint(c[k])})
					}
					return printPairs(w, pairs)
				})
		},
	}
	conf.Flags().BoolVar(&confJSON, "json", false, "print the server's JSON answer")
	cmd.AddCommand(health, conf, newAutopilotSetConfigCommand(g)) // set-config: operator_scheduler.go
	return cmd
}

// printAutopilotHealth writes the table of `ordo operator autopilot health`.
func printAutopilotHealth(w io.Writer, h autopilotHealth) error {
	fmt.Fprintf(w, "Healthy: %t\nFailure tolerance: %d\n\n", h.Healthy, h.FailureTolerance)
	rows := make([][]string, len(h.Servers))
	for i, s := range h.Servers {
		rows[i] = []string{s.Name, s.ID, s.Address, s.Status, strconv.FormatBool(s.Voter), strconv.FormatBool(s.Healthy),
			s.SerfStatus, s.LastContact, strconv.FormatUint(s.LastIndex, 10)}
	}
	return printTable(w, []string{"Name", "ID", "Address", "Role", "Voter", "Healthy", "Status", "LastContact", "LastIndex"}, rows)
}
