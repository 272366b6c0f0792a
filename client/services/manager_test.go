package services_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// eventually waits for cond, failing the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeServers records the calls; fail makes the next calls fail.
type fakeServers struct {
	mu     sync.Mutex
	regs   [][]events.ServiceRegistration
	deregs [][]string
	fails  int
	failed int
}

func (s *fakeServers) RegisterServices(_ context.Context, node string, regs []events.ServiceRegistration) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		s.failed++
		return 0, errors.New("no leader")
	}
	s.regs = append(s.regs, slices.Clone(regs))
	return uint64(len(s.regs) + len(s.deregs)), nil
}

func (s *fakeServers) DeregisterServices(_ context.Context, node string, ids []string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		s.failed++
		return 0, errors.New("no leader")
	}
	s.deregs = append(s.deregs, slices.Clone(ids))
	return uint64(len(s.regs) + len(s.deregs)), nil
}

func (s *fakeServers) calls() (regs [][]events.ServiceRegistration, deregs [][]string, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.regs), slices.Clone(s.deregs), s.failed
}

// fakeTarget is an allocation's runner as a hook sees it.
type fakeTarget struct {
	id       string
	mu       sync.Mutex
	changes  int
	restarts []string
}

func (f *fakeTarget) ID() string { return f.id }
func (f *fakeTarget) Exec(context.Context, string, driver.ExecRequest) (int, error) {
	return -1, allocrunner.ErrExecUnsupported
}
func (f *fakeTarget) TaskExecEnv(string) (map[string]string, string, error) { return nil, "", nil }
func (f *fakeTarget) ChecksChanged() {
	f.mu.Lock()
	f.changes++
	f.mu.Unlock()
}
func (f *fakeTarget) RestartUnhealthy(task, reason string) error {
	f.mu.Lock()
	f.restarts = append(f.restarts, task+": "+reason)
	f.mu.Unlock()
	return nil
}
func (f *fakeTarget) state() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes, slices.Clone(f.restarts)
}

// oneService is the view of allocation id whose task "server" runs (or
// not) with service svc on port label http = port.
func oneService(id string, running bool, port int, svc events.Service) allocrunner.ServiceView {
	job := &events.Job{ID: "web", TaskGroups: []events.TaskGroup{{Name: "api",
		Tasks: []events.Task{{Name: "server", Services: []events.Service{svc}}}}}}
	a := events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "api",
		AllocatedResources: &events.AllocatedResources{Shared: events.AllocatedSharedResources{Ports: []events.PortMapping{
			{Label: "http", Value: port, HostIP: "127.0.0.1"}}}}}
	return allocrunner.ServiceView{Alloc: a, Job: job, Tasks: map[string]allocrunner.ServiceTask{
		"server": {Running: running, StartedAt: time.Unix(1_700_000_000, 0)}}}
}

func TestManagerBatchesAndRetries(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	srv := &fakeServers{}
	m, err := services.New(services.Config{Servers: srv, Node: func() events.Node { return *testNode() }, Clock: clk,
		Interval: time.Second, Backoff: func(int) time.Duration { return 3 * time.Second }, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	svc := events.Service{Name: "web", PortLabel: "http"}
	h1, h2 := m.Hook(&fakeTarget{id: "a1"}), m.Hook(&fakeTarget{id: "a2"})
	h1.Update(oneService("a1", true, 20001, svc))
	h2.Update(oneService("a2", true, 20002, svc))
	h1.Update(oneService("a1", true, 20001, svc)) // unchanged: nothing more to send
	clk.BlockUntilWaiters(1)
	clk.Advance(time.Second)
	eventually(t, "one batched registration", func() bool { r, _, _ := srv.calls(); return len(r) == 1 })
	regs, _, _ := srv.calls()
	if got := []string{regs[0][0].ID, regs[0][1].ID}; !slices.Equal(got, []string{"_nomad-task-a1-server-web-http", "_nomad-task-a2-server-web-http"}) {
		t.Fatalf("batch %v", got)
	}
	if r := regs[0][1]; r.Port != 20002 || r.Address != "127.0.0.1" || r.NodeID != "node-1" {
		t.Fatalf("registration %+v", r)
	}

	// The task stops: deregistered, through one failed call and a retry.
	srv.mu.Lock()
	srv.fails = 1
	srv.mu.Unlock()
	h1.Update(oneService("a1", false, 20001, svc))
	clk.BlockUntilWaiters(1)
	clk.Advance(time.Second)
	eventually(t, "a failed call", func() bool { _, _, f := srv.calls(); return f == 1 })
	clk.BlockUntilWaiters(1)
	clk.Advance(3 * time.Second)
	eventually(t, "the deregistration", func() bool { _, d, _ := srv.calls(); return len(d) == 1 })
	regs, deregs, _ := srv.calls()
	if len(regs) != 1 || !slices.Equal(deregs[0], []string{"_nomad-task-a1-server-web-http"}) {
		t.Fatalf("after the stop: %d register calls, deregistered %v", len(regs), deregs)
	}
	if got := m.Registrations(); len(got) != 1 || got[0].AllocID != "a2" {
		t.Fatalf("registrations held %+v", got)
	}
}

func TestHookChecksAndCheckRestart(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	clk := clocktest.NewClock(t0)
	m, err := services.New(services.Config{Servers: &fakeServers{}, Node: func() events.Node { return *testNode() },
		Clock: clk, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port := hostPort(t, ln.Addr().String())
	svc := events.Service{Name: "web", PortLabel: "http", Checks: []events.ServiceCheck{{Name: "alive", Type: events.CheckTypeTCP,
		Interval: 5 * time.Second, Timeout: time.Second, CheckRestart: &events.CheckRestart{Limit: 2, Grace: 3 * time.Second}}}}
	target := &fakeTarget{id: "a1"}
	h := m.Hook(target)
	if counted, _ := h.ChecksHealthy(); counted {
		t.Fatal("before any update the hook knows of no check")
	}
	status := func() string {
		regs := m.Registrations()
		if len(regs) != 1 {
			return "none"
		}
		return regs[0].Checks[0].Status
	}

	h.Update(oneService("a1", true, port, svc))
	eventually(t, "the first check to pass", func() bool { return status() == pass })
	if counted, passing := h.ChecksHealthy(); !counted || !passing {
		t.Fatalf("ChecksHealthy = %v, %v", counted, passing)
	}
	clk.BlockUntilWaiters(1) // the check's interval

	ln.Close()
	clk.Advance(5 * time.Second)
	eventually(t, "the check to fail", func() bool { return status() == crit })
	if _, passing := h.ChecksHealthy(); passing {
		t.Fatal("a critical check passes deployment health")
	}
	if changes, restarts := target.state(); changes != 2 || len(restarts) != 0 {
		t.Fatalf("after one failure: %d changes, restarts %v", changes, restarts)
	}
	clk.BlockUntilWaiters(1)
	clk.Advance(5 * time.Second)
	eventually(t, "check_restart", func() bool { _, r := target.state(); return len(r) == 1 })
	if _, r := target.state(); r[0] != `server: healthcheck: check "alive" unhealthy` {
		t.Fatalf("restart %q", r[0])
	}

	// The task stops: its registration and its check go.
	clk.BlockUntilWaiters(1)
	h.Update(oneService("a1", false, port, svc))
	if regs := m.Registrations(); len(regs) != 0 {
		t.Fatalf("registrations after the stop: %+v", regs)
	}
	eventually(t, "the check to stop", func() bool { return clk.Waiters() == 0 })
	h.Close(true)
}

// refusingServers refuses (400) any batch holding a registration of
// allocation "gone", as servers do for an allocation they stopped.
type refusingServers struct{ fakeServers }

func (s *refusingServers) RegisterServices(ctx context.Context, node string, regs []events.ServiceRegistration) (uint64, error) {
	for _, r := range regs {
		if r.AllocID == "gone" {
			return 0, &api.Error{Method: "PUT", Path: "/v1/client/" + node + "/services", Status: 400, Message: "allocation gone is terminal"}
		}
	}
	return s.fakeServers.RegisterServices(ctx, node, regs)
}

// A registration the servers refuse is dropped; the others of its batch
// are registered.
func TestManagerDropsRefused(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	srv := &refusingServers{}
	m, err := services.New(services.Config{Servers: srv, Node: func() events.Node { return *testNode() }, Clock: clk,
		Interval: time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	svc := events.Service{Name: "web", PortLabel: "http"}
	m.Hook(&fakeTarget{id: "gone"}).Update(oneService("gone", true, 20001, svc))
	m.Hook(&fakeTarget{id: "a2"}).Update(oneService("a2", true, 20002, svc))
	clk.BlockUntilWaiters(1)
	clk.Advance(time.Second)
	eventually(t, "a2 registered", func() bool { r, _, _ := srv.calls(); return len(r) == 1 })
	if regs, _, _ := srv.calls(); len(regs[0]) != 1 || regs[0][0].AllocID != "a2" {
		t.Fatalf("registered %+v", regs)
	}
	// Nothing is left to retry: once a wake-up queued by the second hook is
	// spent (an empty flush), the loop waits for a change, not a backoff,
	// and registers nothing more.
	eventually(t, "the loop idle", func() bool {
		if clk.Waiters() > 0 {
			clk.Advance(time.Second)
			return false
		}
		return true
	})
	if regs, _, _ := srv.calls(); len(regs) != 1 {
		t.Fatalf("registered again after the refusal: %+v", regs)
	}
}
