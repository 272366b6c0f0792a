package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ClusterConfig is how a cluster of ordo servers in child processes starts.
type ClusterConfig struct {
	// Bin is the ordo binary (BuildBinary).
	Bin string
	// Dir holds each server's data directory and log.
	Dir string
	// Servers is the cluster's size; default 3.
	Servers int
	// ServerProcs, when above 0, is the GOMAXPROCS of every server.
	ServerProcs int
	// ExtraArgs are passed to every `ordo agent` after the harness's own
	// (e.g. -config with a cluster secret).
	ExtraArgs []string
	// Logf reports what the cluster does; default discards.
	Logf func(format string, args ...any)
}

// Cluster is a cluster of ordo servers, each a child process, with a
// partitioning proxy in front of each server's raft port.
type Cluster struct {
	cfg     ClusterConfig
	servers []*Server
	net     *Network
	client  *http.Client
	// secret is the cluster secret the servers share (and the CLI's
	// membership commands send), in $ORDO_CLUSTER_SECRET.
	secret string
}

// Server is one server process of a Cluster.
type Server struct {
	// Index is the server's position in the cluster, from 0.
	Index int
	// HTTP is its API address; Raft the address raft listens on; Advertise
	// the address its peers dial (its proxy).
	HTTP, Raft, Advertise string
	dir                   string
	bin                   string
	args                  []string
	env                   []string
	logf                  func(string, ...any)

	mu struct {
		sync.Mutex
		cmd    *exec.Cmd
		done   chan struct{} // closed when cmd exits
		paused bool
	}
}

// StartCluster starts the servers, waits until they form a cluster with a
// leader that takes writes, and returns it. Stop it with Close.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Servers == 0 {
		cfg.Servers = 3
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	c := &Cluster{cfg: cfg, client: &http.Client{Transport: newTransport()}, secret: newSecret()}
	var err error
	if c.net, err = NewNetwork(cfg.Servers); err != nil {
		return nil, err
	}
	for i := range cfg.Servers {
		s := &Server{Index: i, Advertise: c.net.Addr(i), dir: filepath.Join(cfg.Dir, fmt.Sprintf("s%d", i)),
			bin: cfg.Bin, logf: cfg.Logf}
		if s.HTTP, err = freePort(); err != nil {
			c.Close()
			return nil, err
		}
		if s.Raft, err = freePort(); err != nil {
			c.Close()
			return nil, err
		}
		c.net.SetTarget(i, s.Raft)
		c.servers = append(c.servers, s)
	}
	for i, s := range c.servers {
		s.args = []string{"agent", "-server", "-bootstrap-expect", strconv.Itoa(cfg.Servers),
			"-node", fmt.Sprintf("s%d", i), "-data-dir", filepath.Join(s.dir, "data"),
			"-http-addr", s.HTTP, "-raft-addr", s.Raft, "-raft-advertise", s.Advertise, "-log-level", "info"}
		// The cluster secret is in the environment (Env), which a build
		// older than -cluster-secret (ORDO_BIN) ignores.
		for _, o := range c.servers {
			if o != s {
				s.args = append(s.args, "-join", o.HTTP)
			}
		}
		s.args = append(s.args, cfg.ExtraArgs...)
		s.env = c.Env()
		if cfg.ServerProcs > 0 {
			s.env = append(s.env, "GOMAXPROCS="+strconv.Itoa(cfg.ServerProcs))
		}
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			c.Close()
			return nil, fmt.Errorf("server dir: %w", err)
		}
		if err := s.start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.waitFormed(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Env is the environment of a server or of a CLI command talking to the
// cluster: this process's, with the cluster secret.
func (c *Cluster) Env() []string {
	return append(os.Environ(), clusterSecretEnv+"="+c.secret)
}

// clusterSecretEnv names the variable ordo reads the cluster secret from.
const clusterSecretEnv = "ORDO_CLUSTER_SECRET"

// newSecret returns a random cluster secret.
func newSecret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Servers returns the cluster's servers.
func (c *Cluster) Servers() []*Server { return c.servers }

// Network returns the proxies in front of the servers' raft ports.
func (c *Cluster) Network() *Network { return c.net }

// waitFormed waits until every server answers, all of them are voters of
// one configuration, and the leader accepts a variable write (its keyring
// is ready).
func (c *Cluster) waitFormed(ctx context.Context) error {
	var last string
	ok := poll(ctx, 90*time.Second, func() bool {
		var peers []string
		for _, s := range c.servers {
			if !s.running() {
				// Its port was taken between freePort and its start: the
				// same address again, once the other user lets go.
				last = fmt.Sprintf("s%d exited (its log: %s)", s.Index, filepath.Join(s.dir, "server.log"))
				if err := s.start(); err != nil {
					last = err.Error()
				}
				return false
			}
		}
		for _, s := range c.servers {
			if err := getJSON(ctx, c.client, s.HTTP, "/v1/status/peers", &peers); err != nil {
				last = fmt.Sprintf("s%d peers: %v", s.Index, err)
				return false
			}
			if len(peers) != len(c.servers) {
				last = fmt.Sprintf("s%d has %d voters", s.Index, len(peers))
				return false
			}
		}
		if _, err := c.Leader(ctx); err != nil {
			last = err.Error()
			return false
		}
		st, err := putProbe(ctx, c.client, c.servers[0].HTTP, "formed")
		if err != nil || st != http.StatusOK {
			last = fmt.Sprintf("probe write: %d %v", st, err)
			return false
		}
		return true
	})
	if !ok {
		return fmt.Errorf("cluster did not form within 90s: %s (logs in %s)", last, c.cfg.Dir)
	}
	return nil
}

// selfInfo is what /v1/agent/self says of leadership.
type selfInfo struct {
	Stats struct {
		Ordo struct {
			Leader     string `json:"leader"`
			LeaderAddr string `json:"leader_addr"`
		} `json:"ordo"`
	} `json:"stats"`
}

// Leader returns the server that says it leads and that a majority of the
// servers (itself included) name as leader. A paused or stopped server is
// not asked.
func (c *Cluster) Leader(ctx context.Context) (*Server, error) {
	votes := map[string]int{}
	claims := map[string]*Server{}
	for _, s := range c.servers {
		if !s.Serving() {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		var self selfInfo
		err := getJSON(rctx, c.client, s.HTTP, "/v1/agent/self", &self)
		cancel()
		if err != nil {
			continue
		}
		if a := self.Stats.Ordo.LeaderAddr; a != "" {
			votes[a]++
		}
		if self.Stats.Ordo.Leader == "true" {
			claims[s.Advertise] = s
		}
	}
	for addr, s := range claims {
		if votes[addr] > len(c.servers)/2 {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no leader named by a majority (claims %d, votes %v)", len(claims), votes)
}

// Close resumes, stops and waits for every server and closes the proxies.
func (c *Cluster) Close() {
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop()
		}()
	}
	wg.Wait()
	if c.net != nil {
		c.net.Close()
	}
	c.client.CloseIdleConnections()
}

// start starts the server's process on its data directory and addresses.
func (s *Server) start() error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childAttr() // dies with this process where the OS allows
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start s%d: %w", s.Index, err)
	}
	done := make(chan struct{})
	go func() { // owned by the process: ends when it exits
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	s.mu.Lock()
	s.mu.cmd, s.mu.done, s.mu.paused = cmd, done, false
	s.mu.Unlock()
	s.logf("s%d started (pid %d)", s.Index, cmd.Process.Pid)
	return nil
}

// Serving reports whether the server's process runs and is not paused.
func (s *Server) Serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runningLocked() && !s.mu.paused
}

func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runningLocked()
}

func (s *Server) runningLocked() bool {
	if s.mu.done == nil {
		return false
	}
	select {
	case <-s.mu.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL and waits for the process to exit.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, done := s.mu.cmd, s.mu.done
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("s%d is not running", s.Index)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill s%d: %w", s.Index, err)
	}
	<-done
	s.logf("s%d killed", s.Index)
	return nil
}

// Restart starts a killed server again with the same data directory,
// addresses and flags; it retries while the kernel still holds its ports.
func (s *Server) Restart(ctx context.Context) error {
	var last error
	ok := poll(ctx, 30*time.Second, func() bool {
		if !s.running() {
			if last = s.start(); last != nil {
				return false
			}
		}
		// Up once it answers; a process that exited (a port still held)
		// is started again on the next poll.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var self selfInfo
		last = getJSON(rctx, http.DefaultClient, s.HTTP, "/v1/agent/self", &self)
		return last == nil
	})
	if !ok {
		return fmt.Errorf("restart s%d: %v", s.Index, last)
	}
	return nil
}

// Pause stops the process with SIGSTOP; Resume continues it.
func (s *Server) Pause() error { return s.signalPause(syscall.SIGSTOP, true) }

// Resume continues a paused process with SIGCONT.
func (s *Server) Resume() error { return s.signalPause(syscall.SIGCONT, false) }

func (s *Server) signalPause(sig syscall.Signal, paused bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.runningLocked() {
		return fmt.Errorf("s%d is not running", s.Index)
	}
	if err := s.mu.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%v s%d: %w", sig, s.Index, err)
	}
	s.mu.paused = paused
	s.logf("s%d %v", s.Index, sig)
	return nil
}

// stop continues a paused server, asks it to stop (SIGTERM) and kills it
// if it has not stopped within 20s.
func (s *Server) stop() {
	s.mu.Lock()
	cmd, done, running := s.mu.cmd, s.mu.done, s.runningLocked()
	s.mu.Unlock()
	if !running {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(20 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = cmd.Process.Kill()
		<-done
	}
}

// freePort returns a 127.0.0.1 address whose port was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// newTransport is the HTTP transport of the harness's clients.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.Proxy = nil
	return t
}

// getJSON GETs http://addr+path and decodes a 200 answer into v.
func getJSON(ctx context.Context, c *http.Client, addr, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// poll checks cond every 20ms until it holds (true), timeout passes or ctx
// ends (false).
func poll(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}
