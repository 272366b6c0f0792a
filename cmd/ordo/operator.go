package main

import (
	"io"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

func newOperatorCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Operate the cluster",
	}
	raft := &cobra.Command{
		Use:   "raft",
		Short: "Inspect the cluster's raft configuration",
	}
	raft.AddCommand(newRaftListPeersCommand(g))
	raft.AddCommand(newRaftRemovePeerCommand(g), newRaftTransferLeadershipCommand(g)) // operator_raft.go
	cmd.AddCommand(raft)
	cmd.AddCommand(newAutopilotCommand(g))       // operator_raft.go
	cmd.AddCommand(newProjectionsCommand(g))     // projections.go
	cmd.AddCommand(newMirrorCommand(g))          // mirror.go
	cmd.AddCommand(newRootKeyCommand(g))         // keyring.go: root keyring list|rotate|remove
	cmd.AddCommand(newOperatorHistoryCommand(g)) // operator_history.go
	cmd.AddCommand(newSnapshotCommand(g))        // snapshot.go: save, restore, inspect
	cmd.AddCommand(newSchedulerConfigCommand(g)) // operator_scheduler.go: get-config, set-config
	return cmd
}

func newRaftListPeersCommand(g *globals) *cobra.Command {
	var asJSON, stale bool
	cmd := &cobra.Command{
		Use:   "list-peers",
		Short: "List the servers in the raft configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if stale {
				q.Set("stale", "true")
			}
			return show(cmd, g, "/v1/operator/raft/configuration", q, "read raft configuration", asJSON, printPeers)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	cmd.Flags().BoolVar(&stale, "stale", false, "let any server answer, even without a leader")
	return cmd
}

// printPeers writes the table of `ordo operator raft list-peers`.
func printPeers(w io.Writer, rc api.RaftConfiguration) error {
	rows := make([][]string, len(rc.Servers))
	for i, s := range rc.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		rows[i] = []string{s.Node, s.ID, s.Address, state, strconv.FormatBool(s.Voter), s.RaftProtocol}
	}
	return printTable(w, []string{"Node", "ID", "Address", "State", "Voter", "RaftProtocol"}, rows)
}
