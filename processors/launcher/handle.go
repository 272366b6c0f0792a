package launcher

import (
	"context"
	"fmt"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections/launcher"
)

// handle runs decidePass (decide.go) on the pass's snapshot: it answers
// the decisions' lookups from the driver and the snapshot, and carries
// out the steps they take, their commands through b.
func (r *runner) handle(ctx context.Context, s *snapshot, b *batcher) (bool, error) {
	retries := s.prov.Config.LaunchRetries
	if retries == 0 {
		retries = DefaultLaunchRetries
	}
	f := &facts{name: r.name, gen: r.gen, prov: s.prov, insts: s.insts, quota: r.quota, retries: retries,
		attempts: r.attempts, static: r.hosts != nil, ask: runnerLookups{r: r, ctx: ctx, v: s, types: map[string]typeAnswer{}}}
	if r.hosts != nil {
		f.hosts = r.hosts.d.Hosts()
	}
	provs, err := launcher.Providers(s.v)
	if err != nil {
		return true, err
	}
	f.provs = provs
	ready := readyByPool(s.insts)
	if r.hosts != nil {
		ready = r.readyHosts(s)
		var open []*launcher.Request
		for _, req := range r.open.requested {
			if !req.Declined(r.name) && !r.open.asideStill(req) { // as skip below; a static provider never pauses
				open = append(open, req)
			}
		}
		r.probeHosts(ctx, ready, open)
	}
	r.open.setKey(provs, quotaKey(r.quota))
	r.open.setCheckKey(quotaKey(r.quota), s.prov.ErroredLabels)
	ours := 0
	for _, req := range r.open.pending {
		if req.Provider == r.name {
			ours++
		}
	}
	r.l.m.open.WithLabelValues(r.name, events.RequestPending).Set(float64(ours))
	r.l.m.open.WithLabelValues(r.name, events.RequestRequested).Set(float64(len(r.open.requested)))
	in := passInput{pending: r.open.pending, requested: r.open.requested, ready: ready,
		skip: func(req *launcher.Request, paused bool) bool {
			// Declined, waiting on the providers or the quota, or paused
			// with nothing to decline.
			return req.Declined(r.name) || r.open.asideStill(req) || (paused && r.open.checkedStill(req))
		}}
	t, err := decidePass(f, in, runnerExec{r: r, ctx: ctx, b: b})
	r.retry = t.retry
	return t.busy || t.paused || r.retry, err
}

// runnerExec carries out a pass's steps (exec): logs and marks at once,
// commands queued in the pass's batcher, a failure or release (which
// read the request afresh) at once after the queued commands.
type runnerExec struct {
	r   *runner
	ctx context.Context
	b   *batcher
}

func (e runnerExec) do(s step, then func(err error)) (queued bool) {
	r := e.r
	if s.log != "" {
		if s.debug {
			r.log.Debug(s.log, s.attrs...)
		} else {
			r.log.Info(s.log, s.attrs...)
		}
	}
	switch s.mark {
	case markAside:
		r.open.setAside(s.req) // until the providers change
	case markChecked:
		r.open.markChecked(s.req)
	}
	switch {
	case s.fail != nil:
		e.b.flush()
		then(r.failRequest(e.ctx, s.fail.reqID, s.fail.reason, s.fail.label))
		return false
	case s.release != nil:
		e.b.flush()
		then(r.releasePaused(e.ctx, s.req, s.release))
		return false
	case s.cmd == nil:
		then(nil)
		return false
	}
	e.b.add(s, func(err error) {
		if err == nil {
			r.started(s)
		} else if s.onError == errDefers && !isConflict(err) {
			r.log.Warn("accepting request failed; deferred", "request", s.req.ID, "err", err)
		}
		then(err)
	})
	return true
}

func (e runnerExec) flush() { e.b.flush() }

// started starts the creates a launch or accept decided.
func (r *runner) started(s step) {
	switch c := s.cmd.(type) {
	case *lcmd.Launch:
		r.startCreate(c.ID(), s.req.ID, c.Instance.Label, c.Instance.InstanceType, s.pool, c.Instance.Attributes)
	case *lcmd.Accept:
		for i, id := range c.Launched() {
			in := c.Launch[i]
			r.startCreate(id, s.req.ID, in.Label, in.InstanceType, s.pool, in.Attributes)
		}
	}
}

// runnerLookups answers a pass's lookups from the runner's driver (and
// its caches) and the pass's snapshot. It asks the driver about each
// instance type once a pass, not once a request: the answer is the
// pass's.
type runnerLookups struct {
	r     *runner
	ctx   context.Context
	v     *snapshot
	types map[string]typeAnswer
}

// typeAnswer is what the driver (or its cache) answered for a type.
type typeAnswer struct {
	res driver.Resources
	err error
}

func (a runnerLookups) resources(label string) (driver.Resources, error) {
	lc, _ := a.v.prov.Label(label)
	if ans, ok := a.types[lc.InstanceType]; ok {
		return ans.res, ans.err
	}
	res, err := a.r.resources(a.ctx, a.v.prov, label)
	a.types[lc.InstanceType] = typeAnswer{res: res, err: err}
	return res, err
}

func (a runnerLookups) reachable(req string, in *launcher.Instance) bool {
	return a.r.reachable(a.ctx, a.r.log.With("request", req), req, in)
}

func (a runnerLookups) tenantExceeds(tenant string, need launcher.Usage) (string, error) {
	return launcher.TenantExceeds(a.v.v, tenant, need)
}

// releasePaused handles an error while paused (P27): the provider
// unpauses and the request goes back to every provider.
func (r *runner) releasePaused(ctx context.Context, req *launcher.Request, cause error) error {
	r.log.Warn("error while paused; unpausing and releasing the request", "request", req.ID, "err", cause)
	if err := r.submit(ctx, "node-request.release", lcmd.Release{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex,
		Provider: r.name, Reason: cause.Error()}); err != nil && !isConflict(err) {
		return err
	}
	return r.submit(ctx, "provider.unpause", lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Paused: false,
		Reason: "error while paused: " + cause.Error()})
}

// readyByPool indexes the ready, unassigned instances by pool and label
// (P3: the provider's own pool, from the cache).
func readyByPool(insts []*launcher.Instance) map[string][]*launcher.Instance {
	out := map[string][]*launcher.Instance{}
	for _, in := range insts {
		if in.State == events.InstanceReady && in.RequestID == "" {
			k := readyKey(in.Pool, in.Label)
			out[k] = append(out[k], in)
		}
	}
	return out
}

// logger is what decisions log to.
type logger interface {
	Info(string, ...any)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// quotaKey renders the quota a set-aside request waits on.
func quotaKey(q *driver.Quota) string {
	if q == nil {
		return "unknown"
	}
	return fmt.Sprintf("%d/%d/%d", q.Instances, q.Cores, q.RAMMB)
}
