package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ordoplane/ordo/processors/launcher/driver"
)

// InstanceMetaKey is the node meta key holding the id of the instance the
// node runs on.
const InstanceMetaKey = "unique.ordo.instance_id"

// Defaults of Config.
const (
	DefaultBootTimeout = 30 * time.Second
	DefaultKillGrace   = 10 * time.Second
)

// DefaultResources are what an instance type is taken to hold when
// Config.InstanceTypes lists none.
var DefaultResources = driver.Resources{Cores: 1, RAMMB: 1024}

// Config configures the local driver.
type Config struct {
	// Binary is the ordo executable to run; required.
	Binary string
	// Dir holds one directory per instance; required.
	Dir string
	// Servers are the servers' HTTP addresses the clients talk to; required.
	Servers []string
	// TaskDrivers are the task drivers the clients offer (exec, mock);
	// default exec.
	TaskDrivers []string
	// InstanceTypes are the instance types and what they hold; empty
	// takes any type as DefaultResources.
	InstanceTypes map[string]driver.Resources
	// MaxInstances is the quota: how many instances may run at once; 0
	// is unlimited.
	MaxInstances int
	// BootTimeout bounds how long a client may take to start; default
	// DefaultBootTimeout.
	BootTimeout time.Duration
	// KillGrace is how long a deleted client has to stop after SIGTERM
	// before SIGKILL; default DefaultKillGrace.
	KillGrace time.Duration
	// LogLevel is the clients' log level; default info.
	LogLevel string
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Binary == "":
		return errors.New("local driver: Binary is required")
	case c.Dir == "":
		return errors.New("local driver: Dir is required")
	case len(c.Servers) == 0:
		return errors.New("local driver: Servers is required")
	case c.MaxInstances < 0:
		return errors.New("local driver: MaxInstances must not be negative")
	case c.BootTimeout < 0 || c.KillGrace < 0:
		return errors.New("local driver: BootTimeout and KillGrace must not be negative")
	}
	return nil
}

// Driver launches instances as client agent processes on this machine.
type Driver struct {
	cfg Config
	mu  struct {
		sync.Mutex
		procs map[string]*proc // by instance id
	}
}

var _ driver.Driver = (*Driver)(nil)

// proc is one running client process.
type proc struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{} // closed once the process has exited
	err  error         // its exit, once done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// New returns a Driver; zero fields of cfg take their defaults.
func New(cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BootTimeout == 0 {
		cfg.BootTimeout = DefaultBootTimeout
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("local driver: %w", err)
	}
	d := &Driver{cfg: cfg}
	d.mu.procs = map[string]*proc{}
	return d, nil
}

// Running returns how many instance processes this driver started are
// still running.
func (d *Driver) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, p := range d.mu.procs {
		if !p.exited() {
			n++
		}
	}
	return n
}

// InstanceDir returns the directory of instance id.
func (d *Driver) InstanceDir(id string) string { return filepath.Join(d.cfg.Dir, id) }

// Quota implements driver.Driver.
func (d *Driver) Quota(context.Context) (driver.Quota, error) {
	return driver.Quota{Instances: d.cfg.MaxInstances}, nil
}

// InstanceType implements driver.Driver.
func (d *Driver) InstanceType(_ context.Context, name string) (driver.Resources, error) {
	if len(d.cfg.InstanceTypes) == 0 {
		return DefaultResources, nil
	}
	r, ok := d.cfg.InstanceTypes[name]
	if !ok {
		return driver.Resources{}, fmt.Errorf("local driver: instance type %q does not exist: %w", name, driver.ErrPermanent)
	}
	return r, nil
}

// Create implements driver.Driver.
func (d *Driver) Create(spec driver.Spec) driver.CreateMachine {
	return &createMachine{d: d, spec: spec}
}

// Delete implements driver.Driver.
func (d *Driver) Delete(instanceID, _ string) driver.Machine {
	return &deleteMachine{d: d, id: instanceID}
}

// Close kills every process the driver started and waits for them.
func (d *Driver) Close() {
	d.mu.Lock()
	procs := make([]*proc, 0, len(d.mu.procs))
	for _, p := range d.mu.procs {
		procs = append(procs, p)
	}
	d.mu.Unlock()
	for _, p := range procs {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		<-p.done
	}
}

// agentFile is the client's agent configuration, written as JSON (the
// agent reads a .json config file as HCL's JSON form).
type agentFile struct {
	DataDir  string      `json:"data_dir"`
	LogLevel string      `json:"log_level"`
	Client   clientBlock `json:"client"`
}

type clientBlock struct {
	Enabled    bool              `json:"enabled"`
	Servers    []string          `json:"servers"`
	NodeName   string            `json:"node_name"`
	NodePool   string            `json:"node_pool"`
	NodeClass  string            `json:"node_class,omitempty"`
	Datacenter string            `json:"datacenter,omitempty"`
	Drivers    []string          `json:"drivers,omitempty"`
	Meta       map[string]string `json:"meta"`
}

// config returns the client configuration of spec's instance.
func (d *Driver) config(spec driver.Spec, dir string) agentFile {
	meta := map[string]string{InstanceMetaKey: spec.InstanceID}
	for k, v := range spec.Attributes {
		meta[k] = v
	}
	pool := spec.Attributes["node_pool"]
	if pool == "" {
		pool = spec.Pool
	}
	return agentFile{DataDir: filepath.Join(dir, "data"), LogLevel: d.cfg.LogLevel, Client: clientBlock{
		Enabled: true, Servers: d.cfg.Servers, NodeName: spec.InstanceID, NodePool: pool,
		NodeClass: spec.Attributes["node_class"], Datacenter: spec.Attributes["datacenter"],
		Drivers: d.cfg.TaskDrivers, Meta: meta}}
}

// start writes the instance's directory and starts its client process.
func (d *Driver) start(spec driver.Spec) (*proc, error) {
	dir := d.InstanceDir(spec.InstanceID)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("local driver: instance %s: %w", spec.InstanceID, err)
	}
	b, err := json.MarshalIndent(d.config(spec, dir), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("local driver: instance %s: %w", spec.InstanceID, err)
	}
	cfgPath := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return nil, fmt.Errorf("local driver: instance %s: %w", spec.InstanceID, err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("local driver: instance %s: %w", spec.InstanceID, err)
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(d.cfg.Binary, "agent", "-client", "-config", cfgPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a delete stops the tasks it runs too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("local driver: start instance %s: %w", spec.InstanceID, err)
	}
	p := &proc{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(p.pid)), 0o644); err != nil {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	// The driver owns this goroutine: it reaps the process, and a delete
	// or Close joins it through done.
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	d.mu.Lock()
	d.mu.procs[spec.InstanceID] = p
	d.mu.Unlock()
	return p, nil
}

// createMachine: start the process → wait for its node id → done.
type createMachine struct {
	d        *Driver
	spec     driver.Spec
	p        *proc
	deadline time.Time
}

func (m *createMachine) Advance(_ context.Context, now time.Time) (bool, error) {
	if m.p == nil {
		p, err := m.d.start(m.spec)
		if err != nil {
			return true, err
		}
		m.p, m.deadline = p, now.Add(m.d.cfg.BootTimeout)
	}
	if m.p.exited() {
		return true, fmt.Errorf("local driver: instance %s: client exited while starting (%v); see %s",
			m.spec.InstanceID, m.p.err, filepath.Join(m.d.InstanceDir(m.spec.InstanceID), "agent.log"))
	}
	if b, err := os.ReadFile(filepath.Join(m.d.InstanceDir(m.spec.InstanceID), "data", "client", "node-id")); err == nil &&
		strings.TrimSpace(string(b)) != "" {
		return true, nil
	}
	if now.After(m.deadline) {
		_ = syscall.Kill(-m.p.pid, syscall.SIGKILL)
		return true, fmt.Errorf("local driver: instance %s: client not started after %v", m.spec.InstanceID, m.d.cfg.BootTimeout)
	}
	return false, nil
}

func (m *createMachine) Result() driver.Created {
	return driver.Created{ExternalID: "pid-" + strconv.Itoa(m.p.pid), Addresses: []string{"127.0.0.1"}}
}

// deleteMachine: SIGTERM the group → SIGKILL after the grace → remove
// the directory → done.
type deleteMachine struct {
	d        *Driver
	id       string
	p        *proc
	pid      int
	deadline time.Time
	killed   bool
}

func (m *deleteMachine) Advance(_ context.Context, now time.Time) (bool, error) {
	if m.deadline.IsZero() {
		m.deadline = now.Add(m.d.cfg.KillGrace)
		m.d.mu.Lock()
		m.p = m.d.mu.procs[m.id]
		m.d.mu.Unlock()
		if m.p != nil {
			m.pid = m.p.pid
		} else if b, err := os.ReadFile(filepath.Join(m.d.InstanceDir(m.id), "pid")); err == nil {
			m.pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if m.pid > 0 {
			_ = syscall.Kill(-m.pid, syscall.SIGTERM)
		}
	}
	if m.pid > 0 && m.alive() {
		if now.After(m.deadline) && !m.killed {
			_ = syscall.Kill(-m.pid, syscall.SIGKILL)
			m.killed = true
		}
		return false, nil
	}
	if m.p != nil {
		m.d.mu.Lock()
		delete(m.d.mu.procs, m.id)
		m.d.mu.Unlock()
	}
	if err := os.RemoveAll(m.d.InstanceDir(m.id)); err != nil {
		return true, fmt.Errorf("local driver: remove instance %s: %w", m.id, err)
	}
	return true, nil
}

// alive reports whether the instance's process still runs.
func (m *deleteMachine) alive() bool {
	if m.p != nil {
		return !m.p.exited()
	}
	return syscall.Kill(m.pid, 0) == nil
}

// KillAll kills every instance process recorded under dir (their pid
// files), whoever started them: for tests and operators cleaning up.
func KillAll(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}
