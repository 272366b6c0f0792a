package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateCall is the kind of a client's call to the servers, as the gate sorts
// them.
type gateCall int

const (
	callOther     gateCall = iota // reads: the allocation watch, job versions
	callRegister                  // PUT /v1/client/register
	callHeartbeat                 // PUT /v1/client/:id/heartbeat
	callAllocs                    // PUT /v1/client/:id/allocs
)

var callNames = [...]string{"other", "register", "heartbeat", "allocs"}

func (c gateCall) String() string { return callNames[c] }

func classify(r *http.Request) gateCall {
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/v1/client/") {
		return callOther
	}
	switch {
	case r.URL.Path == "/v1/client/register":
		return callRegister
	case strings.HasSuffix(r.URL.Path, "/heartbeat"):
		return callHeartbeat
	case strings.HasSuffix(r.URL.Path, "/allocs"):
		return callAllocs
	}
	return callOther
}

// gateMode is what the gate does with a request.
type gateMode int

const (
	gateOpen gateMode = iota // everything goes through
	gateCut                  // everything fails at once, as with no route to the servers
	gateHold                 // reads go through; register, heartbeat and alloc-update calls wait until their kind is released
)

// errCut is what a cut-off client's calls fail with.
var errCut = errors.New("disconnect test: cut off from the servers")

// gate is an http.RoundTripper a test can cut off from the servers and
// reconnect call kind by call kind: the transport of a client.Client
// through client.Config.HTTPClient.
type gate struct {
	next http.RoundTripper

	mu struct {
		sync.Mutex
		mode     gateMode
		released [4]bool
		// held counts requests waiting for their kind to be released;
		// answered counts answers let through since the last hold;
		// refused the requests failed while cut, and abandoned those whose
		// caller gave up while held.
		held, answered, refused, abandoned [4]int
		// changed is closed and replaced on every change.
		changed chan struct{}
		// inflight cancels the requests under way, so a cut ends them too.
		inflight map[*http.Request]context.CancelFunc
		// log is the order in which the calls were answered since the last hold.
		log []string
		// holds counts holds: a call that passed the gate before the last
		// hold is not counted as answered since it, when its answer comes
		// back after it.
		holds int
	}
}

var _ http.RoundTripper = (*gate)(nil)

func newGate(t *testing.T) *gate {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	g := &gate{next: tr}
	g.mu.changed = make(chan struct{})
	g.mu.inflight = map[*http.Request]context.CancelFunc{}
	return g
}

// changedLocked wakes the requests and the test waiting on the gate.
func (g *gate) changedLocked() {
	close(g.mu.changed)
	g.mu.changed = make(chan struct{})
}

// RoundTrip implements http.RoundTripper.
func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	k := classify(r)
	g.mu.Lock()
	waiting := false
	for {
		pass := g.mu.mode == gateOpen || (g.mu.mode == gateHold && (k == callOther || g.mu.released[k]))
		if pass || g.mu.mode == gateCut {
			break
		}
		if !waiting {
			waiting = true
			g.mu.held[k]++
			g.changedLocked()
		}
		ch := g.mu.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-r.Context().Done():
			g.mu.Lock()
			g.mu.held[k]--
			g.mu.abandoned[k]++
			g.changedLocked()
			g.mu.Unlock()
			return nil, r.Context().Err()
		}
		g.mu.Lock()
	}
	if waiting {
		g.mu.held[k]--
	}
	if g.mu.mode == gateCut {
		g.mu.refused[k]++
		g.changedLocked()
		g.mu.Unlock()
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, errCut)
	}
	ctx, cancel := context.WithCancel(r.Context())
	r = r.WithContext(ctx)
	g.mu.inflight[r] = cancel
	passedAt := g.mu.holds
	g.mu.Unlock()

	resp, err := g.next.RoundTrip(r)
	done := func() {
		cancel()
		g.mu.Lock()
		delete(g.mu.inflight, r)
		g.mu.Unlock()
	}
	if err != nil {
		done()
		return nil, err
	}
	g.mu.Lock()
	if k != callOther && passedAt == g.mu.holds {
		g.mu.answered[k]++
		g.mu.log = append(g.mu.log, fmt.Sprintf("%s %d", k, resp.StatusCode))
		g.changedLocked()
	}
	g.mu.Unlock()
	resp.Body = &releaseBody{ReadCloser: resp.Body, done: done}
	return resp, nil
}

// releaseBody ends its request's bookkeeping once the body is closed.
type releaseBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// cut fails every request from now on and ends those under way.
func (g *gate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.mode = gateCut
	for _, cancel := range g.mu.inflight {
		cancel()
	}
	g.changedLocked()
}

// hold reconnects the reads only: register, heartbeat and alloc-update
// calls wait until release lets their kind through.
func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.mode = gateHold
	g.mu.holds++
	g.mu.released = [4]bool{}
	g.mu.answered = [4]int{}
	g.mu.log = nil
	g.changedLocked()
}

// release lets calls of kind k through from now on.
func (g *gate) release(k gateCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.released[k] = true
	g.changedLocked()
}

// open lets everything through.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.mode = gateOpen
	g.changedLocked()
}

// answers returns the calls answered since the last hold, in order.
func (g *gate) answers() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.mu.log...)
}

// failed returns how many calls of kind k failed so far: refused while
// cut off, or given up while held.
func (g *gate) failed(k gateCall) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.refused[k] + g.mu.abandoned[k]
}

// waitFor waits until cond holds on the gate's counters, failing t after
// timeout. It wakes on every change of the gate, never by polling.
func (g *gate) waitFor(t *testing.T, timeout time.Duration, what string, cond func(held, answered, refused [4]int) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		ok := cond(g.mu.held, g.mu.answered, g.mu.refused)
		ch := g.mu.changed
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s (calls answered: %v)", timeout, what, g.answers())
		}
	}
}

// waitHeld waits until a call of kind k is waiting at the gate.
func (g *gate) waitHeld(t *testing.T, k gateCall) {
	t.Helper()
	g.waitFor(t, waitTimeout, fmt.Sprintf("the client's %s call to be held", k),
		func(held, _, _ [4]int) bool { return held[k] > 0 })
}

// waitAnswered waits until a call of kind k has been answered since the
// last hold.
func (g *gate) waitAnswered(t *testing.T, k gateCall) {
	t.Helper()
	g.waitFor(t, waitTimeout, fmt.Sprintf("the client's %s call to be answered", k),
		func(_, answered, _ [4]int) bool { return answered[k] > 0 })
}
