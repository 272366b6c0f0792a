package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/segmentio/ksuid"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/logtee"
	"github.com/ordoplane/ordo/processors/bootstrap"
	"github.com/ordoplane/ordo/processors/deploywatch"
	"github.com/ordoplane/ordo/processors/heartbeat"
	"github.com/ordoplane/ordo/processors/jobplan"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/processors/periodic"
	"github.com/ordoplane/ordo/processors/supervisor"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// Version is ordo's version, shown by the API.
const Version = "0.1.0-dev"

// Agent is a running server.
type Agent struct {
	cfg   Config
	id    string
	log   *slog.Logger
	reg   *prometheus.Registry
	store *kv.Store
	fsm   *fsm.FSM
	// rebuilder runs projection rebuilds and verifies (rebuild.go).
	rebuilder *fsm.Rebuilder
	node      *raftlog.Node
	tt        *timetravel.TimeTravel
	pipeline  *commands.Pipeline
	api       *httpapi.Server
	hb        *heartbeat.Monitor
	sched     *scheduling
	http      *http.Server
	httpAddr  string
	tempDir   string
	client    *client.Client // the client role, if enabled (client.go)
	local     localDriver    // the launcher's local driver (capacity.go)
	mirror    *mirror.Mirror // the Kafka mirror, if configured (mirror.go)
	kr        *agentKeyring  // the root keyring (keyring.go)
	// liveness tracks components' heartbeats while this server leads (launcher.go).
	liveness *componentLiveness
	// apiLn is the API's listener, capped per address (httplimits.go).
	apiLn *limitedListener
	// peerClient asks other servers for their raft stats (cluster.go).
	peerClient *http.Client
	// sup runs the leader-only processors; a snapshot restore restarts
	// them (snapshot.go).
	sup *supervisor.Supervisor
	// raftStop stops raft once: on Shutdown, or when the FSM halts (halt.go).
	raftStop raftStop
	// tee copies the agent's log to monitor readers (monitor.go).
	tee *logtee.Tee

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// bootstrapMu serialises the has-state check and bootstrap.
	bootstrapMu sync.Mutex

	mu struct {
		sync.Mutex
		known map[string]httpapi.JoinRequest
		done  bool
	}
}

// Start opens the data directory, starts raft and the API, and begins
// forming or joining the cluster.
func Start(cfg Config) (a *Agent, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	tee := teeLogger(&cfg) // monitor.go: GET /v1/agent/monitor
	if cfg.JoinInterval <= 0 {
		cfg.JoinInterval = time.Second
	}
	if cfg.RaftTimeout <= 0 {
		cfg.RaftTimeout = DefaultRaftTimeout
	}
	if !cfg.Server {
		return startClientOnly(cfg, tee) // client.go
	}
	a = &Agent{cfg: cfg, reg: prometheus.NewRegistry(), tee: tee}
	if err := tee.Register(a.reg); err != nil {
		return nil, err
	}
	a.mu.known = map[string]httpapi.JoinRequest{}
	started := a // an error return sets a to nil: stop what was started
	defer func() {
		if err != nil {
			started.Shutdown()
		}
	}()
	if cfg.Dev && cfg.DataDir == "" {
		if a.tempDir, err = os.MkdirTemp("", "ordo-dev-"); err != nil {
			return nil, fmt.Errorf("dev data dir: %w", err)
		}
		a.cfg.DataDir = a.tempDir
	}
	if err := a.devClusterSecret(); err != nil { // cluster.go
		return nil, err
	}
	if a.cfg.Keyring.ServerToken == "" {
		a.cfg.Keyring.ServerToken = a.cfg.ClusterSecret // servers fetch key material with the cluster secret
	}
	a.peerClient = &http.Client{Timeout: 5 * time.Second}
	if a.id, err = nodeID(a.cfg.DataDir); err != nil {
		return nil, err
	}
	if a.cfg.Name == "" {
		a.cfg.Name, _ = os.Hostname()
	}
	a.cfg.Region, a.cfg.Datacenter = cmp.Or(a.cfg.Region, "global"), cmp.Or(a.cfg.Datacenter, "dc1")
	a.cfg.Scheduler.defaults() // before the API copies the config: /v1/agent/self shows what runs
	a.log = cfg.Logger.With("server", a.id)
	a.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	if a.store, err = kv.Open(filepath.Join(a.cfg.DataDir, "state"), kv.DefaultConfig()); err != nil {
		return nil, err
	}
	a.reg.MustRegister(kv.NewCollector(a.store, "ordo_state_store"))
	// Projections another version wrote are rebuilt before raft starts
	// (rebuildStale, below).
	if a.fsm, err = fsm.New(a.store, fsm.Config{
		Projections: a.projectionSet(), Logger: a.log, Registerer: a.reg, Clock: clock.System{}, AllowStale: true,
		Version: buildVersion}); err != nil { // halt.go: refuses a directory a newer ordo wrote
		return nil, err
	}

	// Listen before raft starts so the advertised HTTP address is known.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("http listen %s: %w", cfg.HTTPAddr, err)
	}
	a.httpAddr = ln.Addr().String()
	if ln, err = a.limitListener(ln); err != nil { // httplimits.go: connections per address
		return nil, err
	}
	a.rebuilder = fsm.NewRebuilder(a.fsm, fsm.RebuilderConfig{Logger: a.log, Registerer: a.reg,
		Clock: clock.System{}, ScratchDir: filepath.Join(a.cfg.DataDir, "scratch")})
	if err := a.rebuildStale(ln); err != nil { // rebuild.go
		ln.Close()
		return nil, err
	}

	// Time travel: the versions store fed by the FSM's commits and
	// backfilled from the archive (Run), and reads at_index/at_time from
	// it. Opened before raft starts, so the versions store sees every
	// entry raft applies from here on.
	if a.tt, err = timetravel.New(timetravel.Config{Options: a.cfg.TimeTravel, DataDir: a.cfg.DataDir, FSM: a.fsm,
		Projections: a.projectionSet(), Logger: a.log, Registerer: a.reg}); err != nil {
		ln.Close()
		return nil, err
	}

	rc := raftlog.DefaultConfig()
	rc.ID = a.id
	rc.BindAddr = cfg.RaftAddr
	rc.Advertise = cfg.RaftAdvertise // "": RaftAddr
	rc.Dir = filepath.Join(a.cfg.DataDir, "raft")
	rc.Bootstrap = cfg.Dev || cfg.BootstrapExpect == 1
	rc.HeartbeatTimeout, rc.ElectionTimeout = cfg.RaftTimeout, cfg.RaftTimeout
	rc.LeaderLeaseTimeout = cfg.RaftTimeout / 2
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	rc.LogOutput = cfg.RaftLogOutput
	rc.Registerer = a.reg
	rc.NoSync = cfg.NoSync
	rc.Autopilot, rc.PeerStats, rc.Logger = cfg.Autopilot, a.peerStats, a.log // cluster.go
	if a.node, err = raftlog.Open(rc, a.fsm); err != nil {
		ln.Close()
		return nil, err
	}
	a.node.SetAutopilotSource(a.autopilotFromLog) // cluster.go
	a.addKnown(httpapi.JoinRequest{ID: a.id, RaftAddr: a.node.Address(), HTTPAddr: a.httpAddr})

	if a.pipeline, err = commands.NewPipeline(commands.PipelineConfig{
		Log: a.node, Store: a.store, Applied: a.fsm.Applied, Leader: a.node, Answers: a.fsm,
		Logger: a.log, Registerer: a.reg}); err != nil {
		ln.Close()
		return nil, err
	}
	if a.hb, err = heartbeat.New(heartbeat.Config{
		Pipeline: a.pipeline, Nodes: a.liveNodes, MinTTL: cfg.HeartbeatMinTTL, Grace: cfg.HeartbeatGrace,
		MaxHeartbeatsPerSecond: cfg.MaxHeartbeatsPerSecond, FailoverTTL: cfg.FailoverHeartbeatTTL,
		Seed: seedOf(a.id), Logger: a.log, Registerer: a.reg}); err != nil {
		ln.Close()
		return nil, err
	}
	if a.mirror, err = a.newMirror(); err != nil { // mirror.go
		ln.Close()
		return nil, err
	}
	var mirrorAPIs httpapi.Mirror
	if a.mirror != nil {
		mirrorAPIs = mirrorAPI{a.mirror}
	}
	if a.kr, err = a.newKeyring(); err != nil { // keyring.go
		ln.Close()
		return nil, err
	}
	if a.cfg.ACL.WorkloadIdentity == nil {
		a.cfg.ACL.WorkloadIdentity = a.kr.keyring
	}
	aclOpts, tokenExpiry, err := a.newACL() // acl.go
	if err != nil {
		ln.Close()
		return nil, err
	}
	scratch := filepath.Join(a.cfg.DataDir, "scratch") // history tools rebuild throwaway state here
	if a.liveness, err = a.newLiveness(); err != nil {
		ln.Close()
		return nil, err
	}
	if a.api, err = httpapi.New(httpapi.Config{
		Node: a.node, FSM: a.fsm, Pipeline: a.pipeline, Join: a.handleJoin, Heartbeats: a.hb, Components: a.liveness,
		Gatherer: a.reg, Registerer: a.reg, Logger: a.log, EnableDebug: cfg.Dev, JobPlanner: jobplan.Planner{Now: time.Now},
		Limits: a.cfg.HTTP, // extended for blocking queries, streams and snapshot uploads
		// History tools: decision re-runs and history file exports.
		Rescheduler: rerun.ForAPI(scratch, 2), Exporter: export.ForAPI(a.id, Version, scratch, clock.System{}),
		Rebuilds: a.rebuilder, Mirror: mirrorAPIs, ACL: aclOpts, Snapshots: a.newSnapshots(),
		Keyring: a.kr.api(a.cfg.Keyring.ServerToken), Encrypter: a.kr.keyring, ClusterSecret: a.cfg.ClusterSecret,
		UnconfirmedReads: a.cfg.UnconfirmedReads, Monitor: a.tee,
		Self: httpapi.Self{ID: a.id, Name: a.cfg.Name, HTTPAddr: a.httpAddr, RaftAddr: a.node.Address(),
			Dev: cfg.Dev, Version: Version, Config: a.cfg, Region: a.cfg.Region, Datacenter: a.cfg.Datacenter},
	}); err != nil {
		ln.Close()
		return nil, err
	}
	// N3: deployments created at registration move to pending once persisted.
	dw, err := deploywatch.New(deploywatch.Config{Pipeline: a.pipeline, State: a.fsm, Logger: a.log, Registerer: a.reg})
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Periodic jobs launch their children on schedule while this server leads.
	pl, err := periodic.New(periodic.Config{Pipeline: a.pipeline, State: a.fsm, Logger: a.log})
	if err != nil {
		ln.Close()
		return nil, err
	}
	// A new leader records the servers and the default namespace.
	boot, err := bootstrap.New(bootstrap.Config{Pipeline: a.pipeline, Peers: a.peersInConfiguration, Keyring: a.kr.keyring, Logger: a.log})
	if err != nil {
		ln.Close()
		return nil, err
	}
	a.http = a.newHTTPServer(a.api) // httplimits.go: the limits block's timeouts

	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.http.Handler = a.limitHandler(a.api.WithHistory(historyStatus{a.tt}))
	a.goroutine(func() { _ = a.tt.Run(ctx) }) // Shutdown closes it, before the store
	a.cfg.Scheduler.defaults()
	if a.sched, err = a.newScheduling(a.cfg.Scheduler.Workers); err != nil {
		ln.Close()
		return nil, err
	}
	procs := []supervisor.Processor{
		boot, a.hb, dw, a.liveness,
		autopilotProcessor{a.node}, // cluster.go: promotes caught-up servers, reports health
	}
	if !a.cfg.Scheduler.Disabled {
		procs = append(procs, a.sched.procs...)
	}
	if !a.cfg.DisablePeriodic {
		procs = append(procs, pl)
	}
	if a.mirror != nil {
		procs = append(procs, a.mirror)
	}
	if tokenExpiry != nil {
		procs = append(procs, tokenExpiry)
	}
	procs = append(procs, a.kr.procs...) // first key, full-rotation rekey, keyring GC
	if g, err := a.newGC(); err != nil {
		ln.Close()
		return nil, err
	} else if g != nil {
		procs = append(procs, g) // gc.go: periodic garbage collection
	}
	if l, err := a.newLauncher(); err != nil {
		ln.Close()
		return nil, err
	} else if l != nil {
		procs = append(procs, l) // launcher.go: one runner per provider generation
	}
	if c, err := a.newCapacity(); err != nil {
		ln.Close()
		return nil, err
	} else if c != nil {
		procs = append(procs, c) // capacity.go: blocked evals → node requests; idle nodes returned
	}
	if vw, err := a.newVolumeWatcher(); err != nil {
		ln.Close()
		return nil, err
	} else {
		procs = append(procs, vw) // csi.go: releases CSI claims of stopped allocations
	}
	sup, err := supervisor.New(supervisor.Config{Logger: a.log, Registerer: a.reg}, procs...)
	if err != nil {
		ln.Close()
		return nil, err
	}
	a.sup = sup
	a.goroutine(func() {
		if err := a.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", "err", err)
		}
	})
	leaderChanges := a.leaderChanges(ctx) // halt.go: a halt is a loss
	a.goroutine(func() { _ = sup.Run(ctx, leaderChanges) })
	a.goroutine(func() { _ = a.rebuilder.Run(ctx) })     // operators' projection rebuilds
	a.goroutine(func() { a.watchHalt(ctx) })             // halt.go: a halted FSM leaves the cluster
	a.goroutine(func() { _ = a.kr.replicator.Run(ctx) }) // every server: fetch missing keys, drop deleted ones
	if len(cfg.Join) > 0 {
		a.goroutine(func() { a.joinLoop(ctx) })
	}
	if cfg.Client.Enabled {
		if err := a.startClient(ctx, []string{a.httpAddr}); err != nil {
			return nil, err
		}
	}
	a.log.Info("agent started", "http", a.httpAddr, "raft", a.node.Address(), "data_dir", a.cfg.DataDir,
		"dev", cfg.Dev, "bootstrap_expect", cfg.BootstrapExpect, "join", strings.Join(cfg.Join, ","))
	return a, nil
}

func (a *Agent) goroutine(f func()) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f()
	}()
}

// ID returns the server's raft id.
func (a *Agent) ID() string { return a.id }

// HTTPAddr returns the address the API listens on.
func (a *Agent) HTTPAddr() string { return a.httpAddr }

// RaftAddr returns the address raft listens on.
func (a *Agent) RaftAddr() string { return a.node.Address() }

// DataDir returns the data directory.
func (a *Agent) DataDir() string { return a.cfg.DataDir }

// TimeTravel returns the server's time travel (reads at_index/at_time).
func (a *Agent) TimeTravel() *timetravel.TimeTravel { return a.tt }

// Node returns the raft node.
func (a *Agent) Node() *raftlog.Node { return a.node }

// FSM returns the FSM.
func (a *Agent) FSM() *fsm.FSM { return a.fsm }

// Rebuilder returns the projection rebuilder.
func (a *Agent) Rebuilder() *fsm.Rebuilder { return a.rebuilder }

// Store returns the state store.
func (a *Agent) Store() *kv.Store { return a.store }

// Pipeline returns the command pipeline.
func (a *Agent) Pipeline() *commands.Pipeline { return a.pipeline }

// Registry returns the agent's metrics registry.
func (a *Agent) Registry() *prometheus.Registry { return a.reg }

// Shutdown stops the agent: API, processors, raft, then the stores.
func (a *Agent) Shutdown() error {
	a.handOver() // cluster.go: leadership to another voter first
	if a.cancel != nil {
		a.cancel()
	}
	var errs []error
	if a.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := a.http.Shutdown(ctx); err != nil {
			a.http.Close()
		}
		cancel()
	}
	if a.node != nil {
		errs = append(errs, a.stopRaft()) // halt.go: once
	}
	a.wg.Wait()
	if a.tt != nil {
		a.tt.Close() // before the store: stops the backfill, joins the versions writer
	}
	if a.api != nil {
		a.api.Close()
	}
	if a.sched != nil {
		a.sched.close()
	}
	if a.hb != nil {
		a.hb.Close()
	}
	if a.mirror != nil {
		a.mirror.Close()
	}
	if a.pipeline != nil {
		a.pipeline.Close()
	}
	if a.rebuilder != nil {
		a.rebuilder.Close()
	}
	if a.fsm != nil {
		a.fsm.Close()
	}
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	a.stopLocalInstances() // capacity.go: -dev only
	if a.tempDir != "" {
		errs = append(errs, os.RemoveAll(a.tempDir))
	}
	return errors.Join(errs...)
}

// nodeID reads the server's id from dir, minting one on first start.
func nodeID(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, "node-id")
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	id := ksuid.New().String()
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	return id, nil
}

// Config returns the agent's effective configuration.
func (a *Agent) Config() Config { return a.cfg }

// historyStatus serves time travel with its status
// (GET /v1/operator/history).
type historyStatus struct{ *timetravel.TimeTravel }

// Status implements httpapi.HistoryStatus.
func (h historyStatus) Status() any { return h.TimeTravel.Status() }
