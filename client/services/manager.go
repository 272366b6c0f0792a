package services

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// Servers are the servers' service calls (client/serverapi.Client).
type Servers interface {
	RegisterServices(ctx context.Context, nodeID string, regs []events.ServiceRegistration) (uint64, error)
	DeregisterServices(ctx context.Context, nodeID string, ids []string) (uint64, error)
}

// MaxBatch is how many registrations (or deregistrations) one call sends.
const MaxBatch = 512

// Config configures a Manager.
type Config struct {
	// Servers receive the registrations. Required.
	Servers Servers
	// Node returns the node the client runs (its id, datacenter, and what
	// ${node.*} interpolates). Required.
	Node func() events.Node
	// Clock times the checks and the retries; default clock.System.
	Clock clock.Clock
	// Interval coalesces changes before they are sent; default 200ms.
	Interval time.Duration
	// Backoff returns the wait before retry n (from 1) of a failed call;
	// default doubling from 500ms to 30s.
	Backoff func(n int) time.Duration
	// HTTPClient runs http checks; default a client that follows no
	// redirects and keeps no idle connections.
	HTTPClient *http.Client
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Metrics count the checks; optional.
	Metrics *Metrics
}

// Manager is a client's service registrations and checks: one hook per
// allocation (ForAlloc) and one loop (Run) that sends what changed.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	wakeCh chan struct{}
	// checks is the checks' context, ended by Close; checkWG joins them.
	checks     context.Context
	stopChecks context.CancelFunc
	checkWG    sync.WaitGroup

	mu struct {
		sync.Mutex
		// regs are the registrations to send (latest version of each);
		// deregs the ids to remove. An id is in at most one of them.
		regs   map[string]events.ServiceRegistration
		deregs map[string]bool
		// known are the registrations as last sent or to be sent, by id.
		known  map[string]events.ServiceRegistration
		closed bool
	}
}

var _ allocrunner.ServiceHooks = (*Manager)(nil)

// New returns a Manager for cfg.
func New(cfg Config) (*Manager, error) {
	if cfg.Servers == nil || cfg.Node == nil {
		return nil, errors.New("services: Servers and Node are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 200 * time.Millisecond
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return clock.Backoff(n, 500*time.Millisecond, 30*time.Second) }
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{
			Transport:     &http.Transport{DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, wakeCh: make(chan struct{}, 1)}
	m.checks, m.stopChecks = context.WithCancel(context.Background())
	m.mu.regs = map[string]events.ServiceRegistration{}
	m.mu.deregs = map[string]bool{}
	m.mu.known = map[string]events.ServiceRegistration{}
	return m, nil
}

// ForAlloc implements allocrunner.ServiceHooks.
func (m *Manager) ForAlloc(r *allocrunner.Runner) allocrunner.ServiceHook {
	return m.Hook(r)
}

// Close stops every check and waits for them. Registrations not yet sent
// stay unsent.
func (m *Manager) Close() {
	m.mu.Lock()
	m.mu.closed = true
	m.mu.Unlock()
	m.stopChecks()
	m.checkWG.Wait()
}

// Registrations returns the registrations the client holds now (sent or
// to be sent), sorted by id: for tests and status.
func (m *Manager) Registrations() []events.ServiceRegistration {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]events.ServiceRegistration, 0, len(m.mu.known))
	for _, r := range m.mu.known {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b events.ServiceRegistration) int { return compare(a.ID, b.ID) })
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// set queues reg to be sent, unless it is what was already queued.
func (m *Manager) set(reg events.ServiceRegistration) {
	m.mu.Lock()
	delete(m.mu.deregs, reg.ID)
	m.mu.known[reg.ID] = reg
	m.mu.regs[reg.ID] = reg
	m.mu.Unlock()
	m.wake()
}

// remove queues id's deregistration.
func (m *Manager) remove(id string) {
	m.mu.Lock()
	delete(m.mu.regs, id)
	delete(m.mu.known, id)
	m.mu.deregs[id] = true
	m.mu.Unlock()
	m.wake()
}

func (m *Manager) wake() {
	select {
	case m.wakeCh <- struct{}{}:
	default:
	}
}

// Run sends queued registrations and deregistrations, coalesced for
// Interval and batched, retrying failed calls with Backoff, until ctx
// ends.
func (m *Manager) Run(ctx context.Context) {
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wakeCh:
		}
		if !m.sleep(ctx, m.cfg.Interval) {
			return
		}
		for {
			err := m.flush(ctx)
			if err == nil {
				failures = 0
				break
			}
			if ctx.Err() != nil {
				return
			}
			failures++
			level := slog.LevelWarn
			if failures == 1 {
				level = slog.LevelDebug
			}
			m.log.Log(ctx, level, "sync services", "err", err, "failures", failures)
			if !m.sleep(ctx, m.cfg.Backoff(failures)) {
				return
			}
		}
	}
}

// flush sends what is queued, a batch at a time; on an error what was
// not acknowledged stays queued (unless queued anew meanwhile).
func (m *Manager) flush(ctx context.Context) error {
	node := m.cfg.Node().ID
	for {
		m.mu.Lock()
		var regs []events.ServiceRegistration
		var ids []string
		for _, r := range m.mu.regs {
			if len(regs) == MaxBatch {
				break
			}
			regs = append(regs, r)
		}
		for id := range m.mu.deregs {
			if len(ids) == MaxBatch {
				break
			}
			ids = append(ids, id)
		}
		m.mu.Unlock()
		if len(regs) == 0 && len(ids) == 0 {
			return nil
		}
		slices.SortFunc(regs, func(a, b events.ServiceRegistration) int { return compare(a.ID, b.ID) })
		slices.Sort(ids)
		if len(regs) > 0 {
			if err := m.register(ctx, node, regs); err != nil {
				return err
			}
			m.mu.Lock()
			for _, r := range regs {
				if cur, ok := m.mu.regs[r.ID]; ok && sameReg(cur, r) {
					delete(m.mu.regs, r.ID)
				}
			}
			m.mu.Unlock()
		}
		if len(ids) > 0 {
			if _, err := m.cfg.Servers.DeregisterServices(ctx, node, ids); err != nil {
				return err
			}
			m.mu.Lock()
			for _, id := range ids {
				if _, again := m.mu.regs[id]; !again {
					delete(m.mu.deregs, id)
				}
			}
			m.mu.Unlock()
		}
	}
}

// register sends regs; when the servers refuse the batch (a 400: one
// allocation is gone or terminal there), each is sent alone and those
// refused are dropped, so one stale registration holds up no other.
func (m *Manager) register(ctx context.Context, node string, regs []events.ServiceRegistration) error {
	_, err := m.cfg.Servers.RegisterServices(ctx, node, regs)
	if !refused(err) {
		return err
	}
	if len(regs) == 1 {
		m.log.Warn("service registration refused", "service_id", regs[0].ID, "alloc_id", regs[0].AllocID, "err", err)
		return nil
	}
	for _, r := range regs {
		if err := m.register(ctx, node, []events.ServiceRegistration{r}); err != nil {
			return err
		}
	}
	return nil
}

// refused reports an error of the servers refusing the request itself.
func refused(err error) bool {
	e, ok := errors.AsType[*api.Error](err)
	return ok && e.Status == http.StatusBadRequest
}

// sameReg reports whether two versions of a registration are equal.
func sameReg(a, b events.ServiceRegistration) bool {
	return a.ID == b.ID && a.ServiceName == b.ServiceName && a.Address == b.Address && a.Port == b.Port &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Checks, b.Checks) && a.NodeID == b.NodeID &&
		a.Datacenter == b.Datacenter
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) bool {
	return clock.Sleep(ctx, m.cfg.Clock, d)
}

// goCheck runs f in a goroutine the Manager joins on Close; false when
// the Manager is closed.
func (m *Manager) goCheck(f func(ctx context.Context)) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return false
	}
	m.checkWG.Go(func() { f(m.checks) })
	return true
}

// Metrics returns the Manager's metrics (Config.Metrics).
func (m *Manager) Metrics() *Metrics { return m.cfg.Metrics }
