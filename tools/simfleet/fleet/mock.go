package fleet

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"
)

// Client and desired statuses as the API spells them.
const (
	statusPending  = "pending"
	statusRunning  = "running"
	statusComplete = "complete"
	statusFailed   = "failed"
	statusLost     = "lost"
	desiredStop    = "stop"
	desiredEvict   = "evict"
)

// mockRules are the mock driver's settings.
type mockRules struct {
	seed     uint64
	runFor   time.Duration
	failRate float64
}

// fails reports whether the allocation id fails on start: a hash of the
// seed and the id below failRate, so the same run fails the same ones.
func (r mockRules) fails(id string) bool {
	if r.failRate <= 0 {
		return false
	}
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], r.seed)
	h.Write(b[:])
	h.Write([]byte(id))
	return float64(mix(h.Sum64())>>11)/(1<<53) < r.failRate
}

// mix is splitmix64's finaliser: FNV alone leaves the high bits of
// similar ids correlated.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// mockAlloc is one allocation as the node runs it.
type mockAlloc struct {
	state  string    // running, complete or failed
	desc   string    // ClientDescription of the state
	doneAt time.Time // when a running allocation completes; zero: when stopped
	// deploymentID and canary come from the servers; healthy is reported
	// with running for an allocation of a deployment.
	deploymentID string
	canary       bool
	// serverState is the client status of the last answer not older than
	// sentIndex.
	serverState string
	// sentState, sentDeploy and sentIndex are the state and deployment
	// last acknowledged and the index of that update; answers older than
	// sentIndex do not count against it.
	sentState  string
	sentDeploy string
	sentIndex  uint64
}

// mockNode is the mock driver's state on one node: pure, owned by the
// node's loop, time passed in.
type mockNode struct {
	rules  mockRules
	allocs map[string]*mockAlloc
	// dirty holds the ids whose state is to be reported.
	dirty map[string]bool
}

func newMockNode(r mockRules) *mockNode {
	return &mockNode{rules: r, allocs: map[string]*mockAlloc{}, dirty: map[string]bool{}}
}

// reconcile applies a watch answer read at index: starts new allocations,
// stops those the servers want stopped, forgets those the servers have
// finished with or no longer list, and marks what must be reported. It
// reports whether the answer changed anything on the node or gave it
// something new to report.
func (m *mockNode) reconcile(list []serverAlloc, index uint64, now time.Time) bool {
	changed := false
	seen := make(map[string]bool, len(list))
	for i := range list {
		a := &list[i]
		seen[a.ID] = true
		l := m.allocs[a.ID]
		if a.ClientStatus == statusComplete || a.ClientStatus == statusFailed || a.ClientStatus == statusLost {
			// Over on the servers' books, whatever ran here.
			if l != nil {
				delete(m.allocs, a.ID)
				delete(m.dirty, a.ID)
				changed = true
			}
			continue
		}
		serverStop := a.DesiredStatus == desiredStop || a.DesiredStatus == desiredEvict
		if l == nil {
			l = &mockAlloc{}
			switch {
			case serverStop:
				l.state, l.desc = statusComplete, "stopped before it started"
			case m.rules.fails(a.ID):
				l.state, l.desc = statusFailed, "mock driver: start error"
			default:
				l.state, l.desc = statusRunning, "mock driver: running"
				if m.rules.runFor > 0 {
					l.doneAt = now.Add(m.rules.runFor)
				}
			}
			m.allocs[a.ID] = l
			changed = true
		}
		l.deploymentID = a.DeploymentID
		if a.DeploymentStatus != nil {
			l.canary = a.DeploymentStatus.Canary
		}
		if l.state == statusRunning && serverStop {
			l.state, l.desc = statusComplete, "stopped by the servers"
			changed = true
		}
		if l.state == statusRunning && !l.doneAt.IsZero() && !now.Before(l.doneAt) {
			l.state, l.desc = statusComplete, "mock driver: run_for elapsed"
			changed = true
		}
		if index < l.sentIndex {
			continue // read before our last report landed
		}
		l.serverState = a.ClientStatus
		healthUnknown := l.state == statusRunning && a.DeploymentID != "" &&
			(a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil)
		if l.state != a.ClientStatus || (healthUnknown && l.sentDeploy != a.DeploymentID) {
			if !m.dirty[a.ID] {
				m.dirty[a.ID] = true
				changed = true
			}
		}
	}
	for id := range m.allocs {
		if !seen[id] {
			delete(m.allocs, id)
			delete(m.dirty, id)
			changed = true
		}
	}
	return changed
}

// tick completes the running allocations whose run_for has elapsed at now
// and returns when the next one is due (zero: none is).
func (m *mockNode) tick(now time.Time) (next time.Time) {
	for id, l := range m.allocs {
		if l.state != statusRunning || l.doneAt.IsZero() {
			continue
		}
		if !now.Before(l.doneAt) {
			l.state, l.desc = statusComplete, "mock driver: run_for elapsed"
			m.dirty[id] = true
			continue
		}
		if next.IsZero() || l.doneAt.Before(next) {
			next = l.doneAt
		}
	}
	return next
}

// updates returns the reports of the dirty allocations, at most max (0:
// all), in id order.
func (m *mockNode) updates(now time.Time, max int) []allocUpdate {
	ids := make([]string, 0, len(m.dirty))
	for id := range m.dirty {
		if m.allocs[id] == nil {
			delete(m.dirty, id)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if max > 0 && len(ids) > max {
		ids = ids[:max]
	}
	out := make([]allocUpdate, 0, len(ids))
	for _, id := range ids {
		l := m.allocs[id]
		u := allocUpdate{ID: id, ClientStatus: l.state, ClientDescription: l.desc}
		if l.deploymentID != "" && l.state != statusComplete {
			healthy := l.state == statusRunning
			u.DeploymentStatus = &deploymentStatus{Healthy: &healthy, Timestamp: now.UnixNano(), Canary: l.canary}
		}
		out = append(out, u)
	}
	return out
}

// acked records that the servers accepted us at index: those allocations
// are clean unless they changed since us was built.
func (m *mockNode) acked(us []allocUpdate, index uint64) {
	for _, u := range us {
		l := m.allocs[u.ID]
		if l == nil {
			continue
		}
		if l.state == u.ClientStatus {
			delete(m.dirty, u.ID)
		}
		l.sentState, l.sentIndex = u.ClientStatus, index
		l.serverState = u.ClientStatus
		if u.DeploymentStatus != nil {
			l.sentDeploy = l.deploymentID
		}
	}
}

// running counts the allocations running here that the servers know run.
func (m *mockNode) running() int {
	n := 0
	for _, l := range m.allocs {
		if l.state == statusRunning && l.serverState == statusRunning {
			n++
		}
	}
	return n
}
