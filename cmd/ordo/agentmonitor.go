package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// addAgentMonitor adds `ordo agent monitor` under the agent command.
func addAgentMonitor(agent *cobra.Command, g *globals) *cobra.Command {
	agent.AddCommand(newAgentMonitorCommand(g))
	return agent
}

// newAgentMonitorCommand is `ordo agent monitor`, Nomad's `nomad monitor`:
// it streams an agent's log lines as they are written, until interrupted.
func newAgentMonitorCommand(g *globals) *cobra.Command {
	var (
		level, nodeID, serverID string
		asJSON                  bool
	)
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Stream an agent's log as it is written",
		Long: `Stream the log lines of the agent at -address as it writes them, until
interrupted (Ctrl-C). -log-level (trace, debug, info, warn or error) may be
below the level the agent writes its own log at. -node-id streams a client
agent's log instead (through the servers), -server-id another server's (its
id or member name, or leader). -json prints each line as JSON.

Lines logged while the reader falls behind are dropped, never held up: a
warning says how many.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{"log_level": {level}}
			if asJSON {
				q.Set("log_json", "true")
			}
			if nodeID != "" {
				q.Set("node_id", nodeID)
			}
			if serverID != "" {
				q.Set("server_id", serverID)
			}
			return followStream(cmd, g, "monitor agent", "/v1/agent/monitor", q, copyMonitorFrames)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&level, "log-level", "info", "lowest level streamed: trace, debug, info, warn or error")
	fl.BoolVar(&asJSON, "json", false, "print each line as JSON")
	fl.StringVar(&nodeID, "node-id", "", "stream this client node's agent log (an id or unique prefix)")
	fl.StringVar(&serverID, "server-id", "", "stream this server's log: its id, member name, or leader")
	return cmd
}

// copyMonitorFrames writes the Data of each monitor frame read from r to
// w, skipping heartbeats, until r ends.
func copyMonitorFrames(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var f struct{ Data []byte }
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return errors.New("monitor stream closed by the agent")
		}
		if err != nil {
			return fmt.Errorf("read monitor stream: %w", err)
		}
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
	}
}

// followStream opens the stream at path with q and copies it to the
// command's output with copyTo until it ends or the user interrupts
// (Ctrl-C or SIGTERM: a normal end, nil). what names the stream in the
// error when it cannot be opened.
func followStream(cmd *cobra.Command, g *globals, what, path string, q url.Values, copyTo func(io.Reader, io.Writer) error) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	body, err := c.Stream(ctx, path, q)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer body.Close()
	err = copyTo(body, cmd.OutOrStdout())
	if ctx.Err() != nil {
		return nil // interrupted: a normal end
	}
	return err
}
