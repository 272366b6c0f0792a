package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// history collects the operations of a run, safe for concurrent use.
type history struct {
	start time.Time

	mu struct {
		sync.Mutex
		ops        []porcupine.Operation
		unknown    int
		conflicts  int
		skipped    int
		statuses   map[int]int
		unexpected []string
		samples    map[int][]string
	}
}

func newHistory() *history {
	h := &history{start: time.Now()}
	h.mu.statuses = map[int]int{}
	h.mu.samples = map[int][]string{}
	return h
}

// now is the time since the run began, in nanoseconds (monotonic).
func (h *history) now() int64 { return int64(time.Since(h.start)) }

// record adds one operation.
func (h *history) record(client, server int, in Input, call, ret int64, r result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.statuses[r.status]++
	if r.detail != "" && len(h.mu.samples[r.status]) < 3 {
		h.mu.samples[r.status] = append(h.mu.samples[r.status], r.detail)
	}
	switch {
	case r.unexpected != "":
		if len(h.mu.unexpected) < 20 {
			h.mu.unexpected = append(h.mu.unexpected, r.unexpected)
		}
		return
	case r.skip:
		h.mu.skipped++
		return
	case r.out.Unknown:
		h.mu.unknown++
		ret = -1 // the end of the history, set by operations()
	case r.out.Conflict:
		h.mu.conflicts++
	}
	h.mu.ops = append(h.mu.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: r.out, Return: ret,
		Metadata: fmt.Sprintf("s%d", server)})
}

// operations returns the history, an unknown outcome's return at its end.
func (h *history) operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	var end int64
	for _, op := range h.mu.ops {
		end = max(end, op.Return, op.Call)
	}
	out := make([]porcupine.Operation, len(h.mu.ops))
	for i, op := range h.mu.ops {
		if op.Return < 0 {
			op.Return = end + 1
		}
		out[i] = op
	}
	return out
}

// failureBackoff is how long a client waits after a failed operation.
const failureBackoff = 100 * time.Millisecond

// client is one workload client: it picks a register, an operation and a
// server at random, sends it, records it, and moves on whatever happened.
type client struct {
	id        int
	regs      []register
	servers   []*Server
	http      *http.Client
	timeout   time.Duration
	hist      *history
	rng       *rand.Rand
	lastIndex map[string]uint64 // the last index this client saw per key
	seq       int
}

func (c *client) run(ctx context.Context) {
	for ctx.Err() == nil {
		c.once(ctx)
	}
}

// once runs one operation: half reads, a fifth writes, the rest cas
// expecting the last index this client saw.
func (c *client) once(ctx context.Context) {
	reg := c.regs[c.rng.IntN(len(c.regs))]
	srv := c.servers[c.rng.IntN(len(c.servers))]
	in := Input{Key: reg.key()}
	switch p := c.rng.IntN(10); {
	case p < 5:
		in.Kind = OpRead
	case p < 7:
		in.Kind = OpWrite
	default:
		in.Kind = OpCAS
		in.Expect = c.lastIndex[in.Key]
	}
	if in.Kind != OpRead {
		c.seq++
		in.Value = fmt.Sprintf("c%d-%d", c.id, c.seq)
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	call := c.hist.now()
	var r result
	if in.Kind == OpRead {
		r = reg.read(rctx, c.http, srv.HTTP)
	} else {
		r = reg.write(rctx, c.http, srv.HTTP, in.Value, in.Kind == OpCAS, in.Expect)
	}
	ret := c.hist.now()
	c.hist.record(c.id, srv.Index, in, call, ret, r)
	if r.skip || r.out.Unknown || r.unexpected != "" {
		// Back off a little after a failure, as a client would, rather
		// than fill the history with failures while there is no leader.
		t := time.NewTimer(failureBackoff)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return
	}
	if !r.out.Conflict || r.out.Current || r.out.CurrentIndex {
		c.lastIndex[in.Key] = r.out.Index
	}
}

// startClients runs n clients until ctx ends; wait joins them.
func startClients(ctx context.Context, n int, regs []register, servers []*Server, timeout time.Duration, hist *history, seed uint64) (wait func()) {
	var wg sync.WaitGroup
	tr := newTransport()
	hc := &http.Client{Transport: tr}
	for i := range n {
		c := &client{id: i, regs: regs, servers: servers, http: hc, timeout: timeout, hist: hist,
			rng: rand.New(rand.NewPCG(seed, uint64(i))), lastIndex: map[string]uint64{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx)
		}()
	}
	return func() {
		wg.Wait()
		tr.CloseIdleConnections()
	}
}
