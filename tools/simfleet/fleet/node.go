package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/api"
)

// maxUpdates is the most allocation updates one call carries (the
// servers' commands/alloc.MaxClientUpdates).
const maxUpdates = 1024

// node is one simulated client node.
type node struct {
	f    *Fleet
	id   string
	name string
	body []byte       // the register body, encoded once
	srv  atomic.Int32 // index of the server it talks to

	mu struct {
		sync.Mutex
		want   bool               // asked to be connected
		cancel context.CancelFunc // ends the current session
	}
	wake chan struct{} // one slot: want changed

	// Owned by the node's loop goroutine.
	mock     *mockNode
	counted  int // this node's share of metrics.allocsRunning
	sessions int // sessions started so far
	runT     *time.Timer
}

// nodeID derives node index i's id from seed: a UUID-shaped hash.
func nodeID(seed uint64, i int) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], seed)
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	sum := sha256.Sum256(b[:])
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func newNode(f *Fleet, i int) (*node, error) {
	cfg := f.cfg
	n := &node{f: f, id: nodeID(cfg.Seed, i), name: fmt.Sprintf("%s-%05d", cfg.NamePrefix, i),
		wake: make(chan struct{}, 1),
		mock: newMockNode(mockRules{seed: cfg.Seed, runFor: cfg.RunFor, failRate: cfg.FailRate})}
	n.srv.Store(int32(i % len(cfg.Servers)))
	n.mu.want = true
	attrs := map[string]string{
		"kernel.name": "linux", "os.name": "simfleet", "cpu.arch": "amd64",
		"unique.hostname": n.name, "unique.simfleet.index": fmt.Sprint(i),
	}
	drivers := map[string]driverInfo{}
	for _, d := range cfg.Drivers {
		drivers[d] = driverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy"}
		attrs["driver."+d] = "1"
	}
	body, err := json.Marshal(nodeBody{ID: n.id, Name: n.name, Datacenter: cfg.Datacenter, NodeClass: cfg.NodeClass,
		NodePool: cfg.NodePool, Attributes: attrs, Meta: map[string]string{"simfleet": "true"},
		Resources: resources{CPU: cfg.CPU, MemoryMB: cfg.MemoryMB, DiskMB: cfg.DiskMB},
		Drivers:   drivers, Status: "initializing"})
	if err != nil {
		return nil, err
	}
	n.body = body
	return n, nil
}

// setWant asks the node to connect or disconnect and reports whether that
// changed what it was asked. Disconnecting cancels the session at once.
func (n *node) setWant(want bool) bool {
	n.mu.Lock()
	if n.mu.want == want {
		n.mu.Unlock()
		return false
	}
	n.mu.want = want
	if !want && n.mu.cancel != nil {
		n.mu.cancel()
		n.mu.cancel = nil
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	return true
}

func (n *node) wanted() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.want
}

// beginSession returns the context of a new session, or false when the
// node is asked to stay disconnected.
func (n *node) beginSession(ctx context.Context) (context.Context, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.mu.want {
		return nil, false
	}
	sctx, cancel := context.WithCancel(ctx)
	n.mu.cancel = cancel
	return sctx, true
}

func (n *node) endSession() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.cancel != nil {
		n.mu.cancel()
		n.mu.cancel = nil
	}
}

// run is the node's loop until ctx ends.
func (n *node) run(ctx context.Context) {
	n.runT = time.NewTimer(time.Hour)
	n.runT.Stop()
	defer n.runT.Stop()
	defer n.syncRunning(0)
	for ctx.Err() == nil {
		sctx, ok := n.beginSession(ctx)
		if !ok {
			n.disconnected(ctx)
			continue
		}
		n.session(sctx)
		n.endSession()
	}
}

// disconnected waits, calling nobody, until the node is asked to connect
// or ctx ends; its allocations keep running meanwhile.
func (n *node) disconnected(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
			if n.wanted() {
				return
			}
		case <-n.runT.C:
			n.armRun()
		}
	}
}

// armRun completes what is due and sets the run timer for the next.
func (n *node) armRun() {
	now := time.Now()
	if next := n.mock.tick(now); !next.IsZero() {
		n.runT.Reset(next.Sub(now))
	}
}

// syncRunning keeps the fleet's running gauge right after a change.
func (n *node) syncRunning(c int) {
	n.f.m.allocsRunning.Add(int64(c - n.counted))
	n.counted = c
}

var errReregister = errors.New("simfleet: the servers do not know the node")

// session runs one connected period: start, then heartbeats, watch
// answers, update batches and mock completions until ctx ends or the
// servers forget the node.
func (n *node) session(ctx context.Context) {
	ttl, index, err := n.start(ctx)
	if err != nil {
		return
	}
	n.f.m.ready.Add(1)
	defer n.f.m.ready.Add(-1)

	wctx, cancel := context.WithCancel(ctx)
	box := &mailbox{ready: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Go(func() { n.watch(wctx, index, box) })
	defer wg.Wait()
	defer cancel()

	hb := time.NewTimer(n.nextHeartbeat(ttl))
	defer hb.Stop()
	batch := time.NewTimer(time.Hour)
	batch.Stop()
	defer batch.Stop()
	armed := false
	arm := func(d time.Duration) {
		if !armed && len(n.mock.dirty) > 0 {
			batch.Reset(d)
			armed = true
		}
	}
	hbBackoff := backoff{base: n.f.cfg.RetryBackoff}
	upBackoff := backoff{base: n.f.cfg.RetryBackoff}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
			ans, err := n.heartbeat(ctx)
			switch {
			case err == nil:
				hbBackoff.reset()
				hb.Reset(n.nextHeartbeat(ans.HeartbeatTTL))
			case ctx.Err() != nil:
				return
			case isStatus(err, http.StatusNotFound):
				return // register again
			default:
				hb.Reset(hbBackoff.next())
			}
		case <-box.ready:
			list, idx, ok := box.take()
			if !ok {
				continue
			}
			if n.mock.reconcile(list, idx, time.Now()) {
				n.f.m.watchChanged.Add(1)
			}
			n.syncRunning(n.mock.running())
			n.runT.Stop()
			n.armRun()
			arm(n.f.cfg.UpdateBatch)
		case <-batch.C:
			armed = false
			if err := n.flush(ctx, false); err != nil {
				if ctx.Err() != nil {
					return
				}
				arm(upBackoff.next())
				continue
			}
			upBackoff.reset()
			arm(0) // more than one call's worth was waiting
		case <-n.runT.C:
			n.armRun()
			arm(n.f.cfg.UpdateBatch)
		}
	}
}

// start registers the node, reads and reports its allocations and
// heartbeats ready, retrying until it succeeds or ctx ends. At most
// StartParallel nodes start at once.
func (n *node) start(ctx context.Context) (ttl time.Duration, index uint64, err error) {
	select {
	case n.f.starts <- struct{}{}:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	defer func() { <-n.f.starts }()
	b := backoff{base: n.f.cfg.RetryBackoff}
	for {
		ttl, index, err = n.tryStart(ctx)
		if err == nil {
			n.sessions++
			return ttl, index, nil
		}
		if ctx.Err() != nil || !sleep(ctx, b.next()) {
			return 0, 0, ctx.Err()
		}
	}
}

func (n *node) tryStart(ctx context.Context) (time.Duration, uint64, error) {
	c, m := n.f.client, n.f.m
	srv := n.server()
	ans, err := c.register(ctx, srv, n.body)
	if err != nil {
		n.failed(ctx, "register", srv, err)
		return 0, 0, err
	}
	m.registrations.Add(1)
	m.ttl(ans.HeartbeatTTL)
	list, index, err := c.allocations(ctx, srv, n.id, 0, 0)
	if err != nil {
		n.failed(ctx, "watch", srv, err)
		return 0, 0, err
	}
	n.mock.reconcile(list, index, time.Now())
	n.runT.Stop()
	n.armRun()
	n.syncRunning(n.mock.running())
	// After a reconnect the report is sent even when empty: it records the
	// update N1 waits for before the node may be ready again.
	force := n.sessions > 0
	for force || len(n.mock.dirty) > 0 {
		if err := n.flush(ctx, force); err != nil {
			return 0, 0, err
		}
		force = false
	}
	hb, err := n.heartbeat(ctx)
	if err != nil {
		return 0, 0, err
	}
	return hb.HeartbeatTTL, index, nil
}

func (n *node) server() int { return int(n.srv.Load()) }

// failed counts err and moves the node to the next server after a
// transport error. Errors of a cancelled session are not counted.
func (n *node) failed(ctx context.Context, call string, srv int, err error) {
	if ctx.Err() != nil {
		return
	}
	n.f.m.failed(call, err)
	n.f.cfg.Logger.Debug("simfleet call failed", "node", n.name, "call", call, "err", err)
	if r := errReason(err); r == "transport" || r == "timeout" || r == "status_5xx" {
		n.srv.CompareAndSwap(int32(srv), int32((srv+1)%len(n.f.client.calls)))
	}
}

func (n *node) heartbeat(ctx context.Context) (api.NodeWriteResponse, error) {
	srv := n.server()
	t0 := time.Now()
	ans, err := n.f.client.heartbeat(ctx, srv, n.id)
	if err != nil {
		n.failed(ctx, "heartbeat", srv, err)
		return ans, err
	}
	n.f.m.heartbeat(time.Since(t0), ans.HeartbeatTTL)
	return ans, nil
}

// flush sends up to maxUpdates dirty allocations (force: even none). An
// update the servers refuse (4xx) is dropped: the next watch answer
// decides again what to report.
func (n *node) flush(ctx context.Context, force bool) error {
	us := n.mock.updates(time.Now(), maxUpdates)
	if len(us) == 0 && !force {
		return nil
	}
	srv := n.server()
	index, err := n.f.client.updateAllocs(ctx, srv, n.id, us)
	if err != nil {
		n.failed(ctx, "update", srv, err)
		if ce, ok := errors.AsType[*api.Error](err); ok && ce.Status >= 400 && ce.Status < 500 && ce.Status != http.StatusConflict {
			for _, u := range us {
				delete(n.mock.dirty, u.ID)
			}
		}
		return err
	}
	n.mock.acked(us, index)
	n.f.m.updated(us)
	n.syncRunning(n.mock.running())
	return nil
}

// nextHeartbeat is when to heartbeat after the servers answered ttl: up
// to HeartbeatJitter of it early.
func (n *node) nextHeartbeat(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	d := time.Duration(float64(ttl) * (1 - n.f.cfg.HeartbeatJitter*rand.Float64()))
	return max(d, 10*time.Millisecond)
}

// watch long-polls the node's allocations from index and posts each
// answer with a new index to box, until ctx ends.
func (n *node) watch(ctx context.Context, index uint64, box *mailbox) {
	b := backoff{base: n.f.cfg.RetryBackoff}
	for ctx.Err() == nil {
		srv := n.server()
		list, idx, err := n.f.client.allocations(ctx, srv, n.id, max(index, 1), n.f.cfg.WatchWait)
		if err != nil {
			n.failed(ctx, "watch", srv, err)
			sleep(ctx, b.next())
			continue
		}
		b.reset()
		if idx == index {
			continue // the wait ran out
		}
		index = idx // a lower index is a new cluster's: follow it
		n.f.m.watchAnswers.Add(1)
		box.put(list, idx)
	}
}

// mailbox hands the latest watch answer to the node's loop.
type mailbox struct {
	mu    sync.Mutex
	list  []serverAlloc
	index uint64
	full  bool
	ready chan struct{} // one slot
}

func (b *mailbox) put(list []serverAlloc, index uint64) {
	b.mu.Lock()
	b.list, b.index, b.full = list, index, true
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *mailbox) take() ([]serverAlloc, uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list, index, ok := b.list, b.index, b.full
	b.list, b.full = nil, false
	return list, index, ok
}

func isStatus(err error, status int) bool {
	ce, ok := errors.AsType[*api.Error](err)
	return ok && ce.Status == status
}

// backoff doubles from base up to 32 times base, with jitter.
type backoff struct {
	base time.Duration
	n    int
}

func (b *backoff) next() time.Duration {
	d := b.base << min(b.n, 5)
	b.n++
	return d/2 + rand.N(d/2+1)
}

func (b *backoff) reset() { b.n = 0 }

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
