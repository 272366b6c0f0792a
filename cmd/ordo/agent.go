package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/cmd/agent"
)

// agentFlags are the values of `ordo agent`'s flags.
type agentFlags struct {
	dev             bool
	server          bool
	client          bool
	servers         []string
	nodeName        string
	dataDir         string
	httpAddr        string
	clientHTTPAddr  string
	raftAddr        string
	raftAdvertise   string
	raftTimeout     time.Duration
	bootstrapExpect int
	join            []string
	clusterSecret   string
	configFile      string
	name            string
	logLevel        string
}

func newAgentCommand() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run an ordo server, client, or both",
		Long: `Run an ordo agent until SIGINT or SIGTERM.

-dev runs a single server bootstrapped at once and a client next to it
(exec and mock drivers), with their data in a temporary directory unless
-data-dir is given. -client runs the client role: alone, talking to the
servers at -servers, unless -server is also given. Otherwise -data-dir is
required, from the flag or from the -config file (HCL). Flags override the
file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.dev, "dev", false, "run a single throwaway server for development")
	fl.BoolVar(&f.server, "server", false, "run the server role")
	fl.BoolVar(&f.client, "client", false, "run the client role (alone unless -server is given)")
	fl.StringSliceVar(&f.servers, "servers", nil, "HTTP addresses of the servers the client talks to; repeatable or comma-separated")
	fl.StringVar(&f.nodeName, "node-name", "", "name of the client's node (default the hostname)")
	fl.StringVar(&f.dataDir, "data-dir", "", "directory for the server's state")
	fl.StringVar(&f.httpAddr, "http-addr", "", "HTTP API listen address (default 127.0.0.1:4646)")
	fl.StringVar(&f.clientHTTPAddr, "client-http-addr", "", "listen address of the client's own API (logs, files, exec), which the servers proxy to; the node advertises it (default 127.0.0.1 on a free port)")
	fl.StringVar(&f.raftAddr, "raft-addr", "", "raft listen address (default 127.0.0.1:4647)")
	fl.StringVar(&f.raftAdvertise, "raft-advertise", "", "raft address other servers dial, when not -raft-addr (a proxy or NAT in front)")
	fl.DurationVar(&f.raftTimeout, "raft-timeout", 0, "raft's heartbeat and election timeout: how long followers wait for a leader before electing another (default 500ms)")
	fl.IntVar(&f.bootstrapExpect, "bootstrap-expect", 0, "number of servers to wait for before bootstrapping")
	fl.StringArrayVar(&f.join, "join", nil, "HTTP address of a server to join; repeatable")
	fl.StringVar(&f.clusterSecret, "cluster-secret", "", "secret every server shares to join and change the servers (or $ORDO_CLUSTER_SECRET)")
	fl.StringVar(&f.configFile, "config", "", "agent configuration file (HCL, or JSON if it ends in .json)")
	fl.StringVar(&f.name, "node", "", "name of this server (default the hostname)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}

// agentSettings is what `ordo agent` runs with: the agent's Config and the
// level of its logger.
type agentSettings struct {
	Config   agent.Config
	LogLevel slog.Level
}

// mergeAgentConfig layers the defaults (agent.DevConfig with -dev, else
// agent.DefaultConfig), then file (nil when there is none), then the flags
// for which changed reports true.
func mergeAgentConfig(f agentFlags, changed func(flag string) bool, file *agentFile) (agentSettings, error) {
	s := agentSettings{Config: agent.DefaultConfig(), LogLevel: slog.LevelInfo}
	if f.dev {
		s.Config = agent.DevConfig()
		s.Config.Client = agent.DevClientConfig()
	}
	c := &s.Config
	if file != nil {
		if err := file.applyTo(c); err != nil {
			return s, err
		}
		if file.LogLevel != nil {
			lvl, err := parseLogLevel(*file.LogLevel)
			if err != nil {
				return s, fmt.Errorf("log_level in %s: %w", file.path, err)
			}
			s.LogLevel = lvl
		}
	}
	if changed("server") {
		c.Server = f.server
	}
	if changed("client") {
		c.Client.Enabled = f.client
		if f.client && !changed("server") && !f.dev && (file == nil || file.Server == nil || file.Server.Enabled == nil) {
			c.Server = false // -client alone runs a client only
		}
	}
	if changed("servers") {
		c.Client.Servers = append([]string(nil), f.servers...)
	}
	if changed("node-name") {
		c.Client.NodeName = f.nodeName
	}
	if changed("data-dir") {
		c.DataDir = f.dataDir
	}
	if changed("http-addr") {
		c.HTTPAddr = f.httpAddr
	}
	if changed("client-http-addr") {
		if err := checkListenAddr(f.clientHTTPAddr); err != nil {
			return s, fmt.Errorf("-client-http-addr: %w", err)
		}
		c.Client.HTTPAddr = f.clientHTTPAddr
	}
	if changed("raft-addr") {
		c.RaftAddr = f.raftAddr
	}
	if changed("raft-advertise") {
		c.RaftAdvertise = f.raftAdvertise
	}
	if changed("raft-timeout") {
		c.RaftTimeout = f.raftTimeout
	}
	if changed("bootstrap-expect") {
		c.BootstrapExpect = f.bootstrapExpect
	}
	if changed("join") {
		c.Join = append([]string(nil), f.join...)
	}
	if v := os.Getenv(clusterSecretEnv); v != "" { // agentconfig_cluster.go
		c.ClusterSecret = v
	}
	if changed("cluster-secret") {
		c.ClusterSecret = f.clusterSecret
	}
	if changed("node") {
		c.Name = f.name
	}
	if changed("log-level") {
		lvl, err := parseLogLevel(f.logLevel)
		if err != nil {
			return s, fmt.Errorf("-log-level: %w", err)
		}
		s.LogLevel = lvl
	}
	return s, nil
}

// parseLogLevel reads one of debug, info, warn or error.
func parseLogLevel(s string) (slog.Level, error) {
	switch s {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q; want debug, info, warn or error", s)
}

// runAgent starts an agent and runs it until SIGINT or SIGTERM.
func runAgent(cmd *cobra.Command, f agentFlags) error {
	var file *agentFile
	if f.configFile != "" {
		var err error
		if file, err = loadAgentFile(f.configFile); err != nil {
			return err
		}
	}
	s, err := mergeAgentConfig(f, cmd.Flags().Changed, file)
	if err != nil {
		return err
	}
	if err := s.Config.Validate(); err != nil {
		return err // already says "agent: ..."
	}
	s.Config.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: s.LogLevel}))
	if s.Config.Server {
		percent, limit := agent.TuneGC("/proc")
		s.Config.Logger.Debug("go collector tuned for a server", "gc_percent", percent, "memory_limit", limit)
	}

	// Catch signals before starting, so one arriving during start-up
	// still shuts the agent down cleanly.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopHUP := catchHangup(s.Config.Logger)
	defer stopHUP()
	a, err := agent.Start(s.Config)
	if err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	out := cmd.OutOrStdout()
	if s.Config.Server {
		printAgentBanner(out, a, s.Config)
	} else {
		printClientBanner(out, a, s.Config)
	}
	<-ctx.Done()
	stop() // a second signal now kills the process
	fmt.Fprintln(out, "==> Caught signal, gracefully shutting down agent...")
	if err := a.Shutdown(); err != nil {
		return fmt.Errorf("shut down agent: %w", err)
	}
	fmt.Fprintln(out, "==> Agent stopped")
	return nil
}

// catchHangup keeps the agent running through SIGHUP, which Nomad's agent
// takes as "reload the configuration" and ordo does not support yet: it
// is logged and otherwise ignored. Catching it (rather than inheriting an
// ignored SIGHUP, as under nohup) also lets the tasks the client starts
// begin with SIGHUP at its default, so a task whose kill_signal is SIGHUP
// can trap it: a signal ignored when a shell starts cannot be trapped.
func catchHangup(log *slog.Logger) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-c:
				log.Info("SIGHUP received: configuration reload is not supported; ignored")
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}

// printAgentBanner writes the lines `ordo agent` prints once it has started.
func printAgentBanner(w io.Writer, a *agent.Agent, cfg agent.Config) {
	dataDir := a.DataDir()
	if cfg.Dev && cfg.DataDir == "" {
		dataDir += " (temporary, removed on exit)"
	}
	fmt.Fprintf(w, "==> ordo agent started! Log data will stream in below:\n\n")
	fmt.Fprintf(w, "%17s: %s\n", "Server ID", a.ID())
	fmt.Fprintf(w, "%17s: %s\n", "HTTP Addr", a.HTTPAddr())
	fmt.Fprintf(w, "%17s: %s\n", "Raft Addr", a.RaftAddr())
	fmt.Fprintf(w, "%17s: %s\n", "Data Dir", dataDir)
	fmt.Fprintf(w, "%17s: %d\n", "Bootstrap Expect", cfg.BootstrapExpect)
	if c := a.Client(); c != nil {
		fmt.Fprintf(w, "%17s: %s\n", "Client Node ID", c.NodeID())
	}
	fmt.Fprintf(w, "%17s: %t\n\n", "Dev Mode", cfg.Dev)
}

// printClientBanner is printAgentBanner for an agent running the client
// role alone.
func printClientBanner(w io.Writer, a *agent.Agent, cfg agent.Config) {
	fmt.Fprintf(w, "==> ordo client started! Log data will stream in below:\n\n")
	if c := a.Client(); c != nil {
		fmt.Fprintf(w, "%17s: %s\n", "Node ID", c.NodeID())
	}
	fmt.Fprintf(w, "%17s: %s\n", "Servers", strings.Join(cfg.Client.Servers, ", "))
	fmt.Fprintf(w, "%17s: %s\n\n", "Data Dir", a.DataDir())
}
