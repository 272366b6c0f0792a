package launcher

import (
	"errors"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections/launcher"
)

// The launcher's decisions on one provider's requests, apart from their
// submission: decidePass walks the requests in the runner's order and
// asks, for each, a pure function of the pass's facts, what the pass has
// decided so far (the tally) and the request, which steps to take. The
// runner (handle.go) submits each step and reports how it went; a test
// (decide_test.go) plays the runner from a script.

// lookups are the answers a decision may need beyond the facts: the
// driver's figures for an instance type (cached, P14), a static host's
// reachability (checked once a pass, P8) and a tenant's limit (P13). The
// runner answers from its driver and snapshot, a test from a table; each
// answer is read-only and the same for the whole pass.
type lookups interface {
	resources(label string) (driver.Resources, error)
	reachable(req string, in *launcher.Instance) bool
	tenantExceeds(tenant string, need launcher.Usage) (string, error)
}

// facts are what a pass decides on, read before its first decision.
type facts struct {
	name string
	gen  uint64
	prov *launcher.Provider
	// provs are every provider, for the priority order (P11).
	provs []*launcher.Provider
	insts []*launcher.Instance
	// quota is the driver's last good quota; nil until it told one (P9).
	quota *driver.Quota
	// retries bounds the launches of a request's instances.
	retries int
	// attempts counts each request's failed launches.
	attempts map[string]int
	// static is set for a provider of fixed hosts; hosts are its hosts.
	static bool
	hosts  []driver.Host
	ask    lookups
}

// tally is what the pass has decided so far: decide reads it, and the
// runner updates it with applied as each step is submitted.
type tally struct {
	used     launcher.Usage
	poolUsed map[string]launcher.Usage
	// paused is the provider's pause as decided; pausedFor the request
	// it paused for.
	paused    bool
	pausedFor string
	// ready are the ready, unassigned instances (or free hosts) by pool
	// and label, as readyKey names them.
	ready map[string][]*launcher.Instance
	// busy and retry ask for a timed look again.
	busy, retry bool
}

// newTally starts a pass's tally from its facts.
func newTally(f *facts) *tally {
	used, poolUsed := usage(f.insts)
	return &tally{used: used, poolUsed: poolUsed, paused: f.prov.Paused, busy: f.prov.Paused || f.quota == nil,
		pausedFor: pausedRequest(f.prov)}
}

func pausedRequest(p *launcher.Provider) string {
	if p.Paused {
		return p.PausedRequest
	}
	return ""
}

func readyKey(pool, label string) string { return pool + "\x00" + label }

// onError says what a failed step does.
type onError uint8

const (
	// errEndsPass: any error ends the pass with it.
	errEndsPass onError = iota
	// errConflictOK: a conflict ends the request's steps quietly; any
	// other error ends the pass.
	errConflictOK
	// errDefers: any error ends the request's steps and the pass goes
	// on; the request is decided again next pass.
	errDefers
	// errLaunch: a conflict goes on with the request's next step (the
	// request changed: decided again next pass); any other error ends
	// the pass, releasing the request first when it is the one the
	// provider paused for (P27).
	errLaunch
)

// mark is what a step records in the runner's view of the requests.
type mark uint8

const (
	markNone mark = iota
	// markAside: wait until the providers change (P11).
	markAside
	// markChecked: found nothing to decline while paused.
	markChecked
)

// step is one thing a decision asks the runner to do, in order: log,
// mark the request in the view, submit a command, fail a request or
// release one.
type step struct {
	// log is logged before anything else, with attrs; at debug when debug.
	log   string
	attrs []any
	debug bool
	// name and cmd are the command to submit, by the name the metrics
	// count it under.
	name    string
	cmd     commands.Command
	onError onError
	// req is the request the step is about.
	req *launcher.Request
	// about names the request of the instance a step without req acts
	// on, when its command reads that request (an instance turning ready
	// fulfils it): the step and another on the request are never in one
	// group (group.go).
	about string
	// mark records req in the runner's view.
	mark mark
	// fail fails req (or errors its label) as read afresh: the request
	// has used its launch attempts or a launch failed for good.
	fail *failRequest
	// release releases req after cause while paused, unpausing; the
	// pass ends after it (P27).
	release error
	// use is what a launch or accept adds to the pool's usage.
	use  launcher.Usage
	pool string
}

// failRequest names a request to fail and why.
type failRequest struct {
	reqID, reason, label string
}

// applied updates the tally with a step the runner submitted.
func (t *tally) applied(f *facts, s step) {
	switch c := s.cmd.(type) {
	case lcmd.Pause:
		t.paused, t.pausedFor = c.Paused, c.RequestID
	case *lcmd.Launch:
		t.used, t.poolUsed[s.pool] = t.used.Add(s.use), t.poolUsed[s.pool].Add(s.use)
	case *lcmd.Accept:
		t.consume(f, c.Assign, s.pool, s.req.Labels)
		if c.Partial {
			t.paused = true
			return
		}
		t.used, t.poolUsed[s.pool] = t.used.Add(s.use), t.poolUsed[s.pool].Add(s.use)
	}
}

// consume drops assigned instances from ready.
func (t *tally) consume(f *facts, assign []lcmd.Assignment, pool string, labels []string) {
	if f.static {
		labels = nil // a host is indexed under each of its labels
		for k := range t.ready {
			if l, ok := strings.CutPrefix(k, pool+"\x00"); ok {
				labels = append(labels, l)
			}
		}
	}
	for _, l := range labels {
		k := readyKey(pool, l)
		t.ready[k] = slices.DeleteFunc(t.ready[k], func(in *launcher.Instance) bool {
			return slices.ContainsFunc(assign, func(a lcmd.Assignment) bool { return a.InstanceID == in.ID })
		})
	}
}

// exec carries out a pass's steps. do carries s out at once, or queues
// its command to be submitted together with others of the pass (one
// entry, Pipeline.RunGroup); then receives s's outcome, at once or when
// the queued commands are submitted, and queued reports which. flush
// submits whatever is queued, and whatever the outcomes it reports queue
// in turn, before it returns.
//
// The tally counts a queued step as applied from the moment it is
// queued, so the pass's later decisions see it (a quota is never
// overshot within a pass); one that is then refused only made the rest
// of the pass more careful. A step carried out at once counts once it
// succeeded.
type exec interface {
	do(s step, then func(err error)) (queued bool)
	flush()
}

// passInput are the open requests a pass walks: the requests this
// provider accepted (pending, of every provider) and those no provider
// took yet (requested), in priority order; skip says which requested
// ones need no decision now (declined, set aside, or checked while
// paused); ready indexes the instances (or hosts) it may hand out.
type passInput struct {
	pending, requested []*launcher.Request
	skip               func(req *launcher.Request, paused bool) bool
	ready              map[string][]*launcher.Instance
}

// decidePass decides on the provider's pending requests (relaunches),
// its pause, the requested ones in priority order and min-ready, handing
// each step to ex as it is decided, and flushes ex before it returns. It
// returns the tally, whose busy, paused and retry ask for a timed look
// again, and the error that ended the pass.
func decidePass(f *facts, in passInput, ex exec) (*tally, error) {
	t := newTally(f)
	p := &passRun{f: f, t: t, ex: ex}
	err := p.decide(in)
	ex.flush()
	if p.ended {
		return t, p.err
	}
	return t, err
}

func (p *passRun) decide(in passInput) error {
	f, t := p.f, p.t
	minReadyOpen := map[string]int{}
	var pending []*launcher.Request
	for _, req := range in.pending {
		if req.MinReady && len(req.Labels) == 1 {
			minReadyOpen[req.Labels[0]]++
		}
		if req.Provider == f.name {
			pending = append(pending, req)
		}
	}
	for _, req := range pending {
		if p.steps(decidePending(f, t, req)); p.ended {
			return nil
		}
	}
	if t.paused && t.pausedFor != "" && !slices.ContainsFunc(pending, func(q *launcher.Request) bool { return q.ID == t.pausedFor }) {
		// The request it paused for is gone or no longer ours.
		if p.steps([]step{unpause(f, "request "+t.pausedFor+" no longer pending here")}); p.ended {
			return nil
		}
	}
	t.ready = in.ready
	for _, req := range in.requested {
		if req.MinReady && len(req.Labels) == 1 {
			minReadyOpen[req.Labels[0]]++
		}
		if in.skip(req, t.paused) {
			continue
		}
		steps, derr := decideRequested(f, t, req)
		if p.steps(steps); p.ended {
			return nil
		}
		if derr != nil {
			return derr
		}
	}
	if !t.paused && f.quota != nil && !f.static {
		// Each min-ready request stands on its own.
		for _, s := range decideMinReady(f, t, minReadyOpen) {
			if p.steps([]step{s}); p.ended {
				return nil
			}
		}
	}
	return nil
}

// passRun is one pass's walk over its decisions: the facts, the tally,
// where its steps go and whether (and with which error) a step ended it.
type passRun struct {
	f     *facts
	t     *tally
	ex    exec
	ended bool
	err   error
}

// end ends the pass with err (nil: ended without error), unless a step
// ended it already.
func (p *passRun) end(err error) {
	if !p.ended {
		p.ended, p.err = true, err
	}
}

// steps runs a request's steps in order: each once the one before it has
// its outcome, as that one's onError says, the tally updated with each
// (see exec). A pass that ended runs no more steps.
func (p *passRun) steps(steps []step) {
	if len(steps) == 0 || p.ended {
		return
	}
	s, rest := steps[0], steps[1:]
	// queued is set once do returns: an outcome reported from inside do
	// sees false, one reported at a flush sees true.
	queued := false
	queued = p.ex.do(s, func(err error) { p.outcome(s, rest, err, queued) })
	if queued {
		p.t.applied(p.f, s)
	}
}

// outcome carries on with a request's steps after s ended with err.
func (p *passRun) outcome(s step, rest []step, err error, queued bool) {
	if s.release != nil {
		p.end(err)
		return
	}
	if err == nil {
		if !queued {
			p.t.applied(p.f, s)
		}
		p.steps(rest)
		return
	}
	switch s.onError {
	case errEndsPass:
		p.end(err)
	case errConflictOK:
		if !isConflict(err) {
			p.end(err)
		}
	case errDefers:
	case errLaunch:
		switch {
		case isConflict(err):
			p.steps(rest)
		case p.t.paused && s.req.ID == p.t.pausedFor:
			p.steps([]step{{req: s.req, release: err}}) // P27
		default:
			p.end(err)
		}
	}
}

func unpause(f *facts, reason string) step {
	return step{name: "provider.unpause", cmd: lcmd.Pause{Provider: f.name, ConfigIndex: f.gen, Paused: false, Reason: reason}}
}

func pause(f *facts, req, why string) step {
	return step{name: "provider.pause", cmd: lcmd.Pause{Provider: f.name, ConfigIndex: f.gen, Paused: true, RequestID: req, Reason: why}}
}

// need sums the resources of one instance per label; label names the
// one that failed.
func need(f *facts, labels []string) (launcher.Usage, string, error) {
	var u launcher.Usage
	for _, l := range labels {
		res, err := f.ask.resources(l)
		if err != nil {
			return u, l, err
		}
		u = u.Add(launcher.Usage{Servers: 1, Cores: res.Cores, RAMMB: res.RAMMB})
	}
	return u, "", nil
}

// decidePending decides on a request this provider accepted: relaunch
// one missing instance, fail it after its attempts, pause at quota, or
// unpause once it has what it paused for (P24).
func decidePending(f *facts, t *tally, req *launcher.Request) []step {
	prov := f.prov
	missing := missingLabels(f.insts, req)
	if len(missing) == 0 {
		if req.ID == t.pausedFor {
			return []step{unpause(f, "request "+req.ID+" has its instances")}
		}
		return nil
	}
	if f.attempts[req.ID] >= f.retries {
		return []step{{req: req, onError: errConflictOK,
			fail: &failRequest{reqID: req.ID, reason: "launch failed " + itoa(f.attempts[req.ID]) + " times"}}}
	}
	pool, ok := prov.PoolFor(req.Labels)
	if !ok {
		return nil
	}
	needed, _, err := need(f, missing)
	if err != nil {
		if t.paused && req.ID == t.pausedFor {
			return []step{{req: req, release: err}} // P27
		}
		return nil
	}
	if f.quota == nil {
		return nil // P9: quota not known yet
	}
	why := over(t.used, needed, *f.quota)
	if why == "" {
		why = poolOver(t.poolUsed[pool.Name], needed, pool)
	}
	if why != "" {
		t.busy = true
		if t.paused {
			return nil
		}
		s := pause(f, req.ID, why)
		s.log, s.attrs = "pool short of quota for request; pausing", []any{"request", req.ID, "pool", pool.Name, "reason", why} // P25
		return []step{s}
	}
	// One launch a pass: a later Launch of the same request needs its
	// new modify index.
	label := missing[0]
	lc, _ := prov.Label(label)
	res, _ := f.ask.resources(label)
	steps := []step{{name: "instance.launch", req: req, onError: errLaunch, pool: pool.Name,
		use: launcher.Usage{Servers: 1, Cores: res.Cores, RAMMB: res.RAMMB},
		cmd: &lcmd.Launch{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex, Instance: events.Instance{
			Provider: f.name, ConfigIndex: f.gen, Pool: pool.Name, Label: label, InstanceType: lc.InstanceType,
			Cores: res.Cores, RAMMB: res.RAMMB, Attributes: pool.NodeAttributes}}}}
	t.busy = true
	if req.ID == t.pausedFor {
		steps = append(steps, unpause(f, "quota allows request "+req.ID))
	}
	return steps
}

// missingLabels returns the labels of req that have no live instance of it.
func missingLabels(insts []*launcher.Instance, req *launcher.Request) []string {
	have := map[string]int{}
	for _, in := range insts {
		if in.RequestID != req.ID {
			continue
		}
		switch in.State {
		case events.InstanceBuilding, events.InstanceReady, events.InstanceInUse:
			have[in.Label]++
		}
	}
	var out []string
	for _, l := range req.Labels {
		if have[l] > 0 {
			have[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

// decline is the step declining req for reason (P15).
func decline(f *facts, req *launcher.Request, reason string) step {
	return step{log: "declining node request", attrs: []any{"request", req.ID, "requestor", req.Requestor, "reason", reason},
		name: "node-request.decline", req: req, onError: errConflictOK,
		cmd: lcmd.Decline{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex, Provider: f.name, Reason: reason}}
}

// note is a step that only logs, about req.
func note(req *launcher.Request, msg string, attrs ...any) step {
	return step{log: msg, attrs: append([]any{"request", req.ID, "requestor", req.Requestor}, attrs...)}
}

// decideRequested decides on a request no provider took yet: decline
// it, fail it, yield it to a better provider, defer it, or accept it —
// handing out ready instances and launching the rest, or, short of
// quota, accepting it and pausing.
func decideRequested(f *facts, t *tally, req *launcher.Request) ([]step, error) {
	prov := f.prov
	pool, ok := prov.PoolFor(req.Labels)
	if !ok {
		// P1: the reason names only the request's own labels.
		var unserved []string
		for _, l := range req.Labels {
			if _, ok := prov.PoolFor([]string{l}); !ok {
				unserved = append(unserved, l)
			}
		}
		reason := "no pool serves labels " + strings.Join(unserved, ", ")
		if len(unserved) == 0 {
			reason = "no single pool serves all of " + strings.Join(req.Labels, ", ")
		}
		return []step{decline(f, req, reason)}, nil
	}
	for _, l := range req.Labels {
		if why, bad := prov.ErroredLabels[l]; bad {
			// P2: accepted and failed at once, not looped on.
			return []step{note(req, "request for an errored label fails", "label", l, "reason", why),
				{name: "node-request.fail", req: req, onError: errConflictOK, cmd: lcmd.Fail{RequestID: req.ID,
					RequestModifyIndex: req.ModifyIndex, Provider: f.name, Reason: "label " + l + " errored: " + why}}}, nil
		}
	}
	if better := yieldTo(f.provs, prov, req); better != "" {
		return []step{{req: req, mark: markAside}}, nil // P11: a provider of better priority can take it
	}
	needed, label, err := need(f, req.Labels)
	if errors.Is(err, driver.ErrPermanent) {
		return []step{{name: "node-request.fail", req: req, onError: errConflictOK, cmd: lcmd.Fail{RequestID: req.ID,
			RequestModifyIndex: req.ModifyIndex, Provider: f.name, Reason: err.Error(), LabelError: label, ConfigIndex: f.gen}}}, nil
	} else if err != nil {
		return []step{note(req, "instance type resources unavailable; request deferred", "err", err)}, nil
	}
	if f.quota == nil {
		// P9: nothing is accepted against a quota never read.
		return []step{note(req, "provider quota unknown; request deferred")}, nil
	}
	// P7, P9: what no quota or pool could ever hold is declined, paused or not.
	if why := over(launcher.Usage{}, needed, *f.quota); why != "" {
		return []step{decline(f, req, "can never be satisfied: "+why)}, nil
	}
	if why := poolOver(launcher.Usage{}, needed, pool); why != "" {
		return []step{decline(f, req, "can never be satisfied: "+why)}, nil
	}
	checked := step{req: req, mark: markChecked}
	if t.paused {
		return []step{checked}, nil // P7: a paused provider accepts nothing
	}
	steps := []step{checked}
	// P3: reuse ready instances of the pool (a static provider's hosts,
	// when they answer, P8).
	var assign []lcmd.Assignment
	var launch []string
	chosen := map[string]bool{}
	for _, l := range req.Labels {
		var pick *launcher.Instance
		// A min-ready request wants one more ready instance: handing it
		// a ready one would only churn.
		for _, in := range t.ready[readyKey(pool.Name, l)] {
			if req.MinReady || pick != nil {
				break
			}
			if !chosen[in.ID] && (!f.static || f.ask.reachable(req.ID, in)) {
				pick = in
			}
		}
		if pick != nil {
			chosen[pick.ID] = true
			assign = append(assign, lcmd.Assignment{InstanceID: pick.ID, ModifyIndex: pick.ModifyIndex})
			continue
		}
		launch = append(launch, l)
	}
	if len(assign) == 0 && len(t.ready) > 0 {
		s := note(req, "no ready instance to reuse", "pool", pool.Name)
		s.debug = true
		steps = append(steps, s)
	}
	if f.static && len(launch) > 0 {
		// A static provider creates nothing and never pauses (P8): a
		// request its hosts can never hold is declined, one whose hosts
		// are busy or unreachable is left for a later pass.
		if why := hostsShort(f.hosts, pool.Name, prov, req.Labels); why != "" {
			return append(steps, decline(f, req, "can never be satisfied: "+why)), nil
		}
		s := note(req, "no free reachable static host for request; left for later", "labels", req.Labels)
		s.debug = true
		t.retry = true
		return append(steps, s), nil
	}
	launchNeed, _, err := need(f, launch)
	if err != nil {
		return steps, nil
	}
	if why, err := f.ask.tenantExceeds(req.Tenant, launchNeed); err != nil {
		return steps, err
	} else if why != "" {
		return append(steps, note(req, "request deferred: tenant at its limit", "tenant", req.Tenant, "reason", why)), nil // P13
	}
	a := &lcmd.Accept{Provider: f.name, ConfigIndex: f.gen, Pool: pool.Name, RequestID: req.ID, RequestModifyIndex: req.ModifyIndex, Assign: assign}
	why := ""
	if len(launch) > 0 { // reuse needs no quota
		why = over(t.used, launchNeed, *f.quota)
		if why == "" {
			why = poolOver(t.poolUsed[pool.Name], launchNeed, pool)
		}
	}
	accept := step{name: "node-request.accept", cmd: a, req: req, pool: pool.Name, use: launchNeed}
	if why != "" {
		if req.MinReady {
			return append(steps, decline(f, req, "at quota: "+why)), nil // P23
		}
		a.Partial = true
		accept.log = "pool short of quota for request; accepting and pausing" // P25
		accept.attrs = []any{"request", req.ID, "requestor", req.Requestor, "pool", pool.Name, "reason", why}
		accept.onError = errConflictOK
		return append(steps, accept, pause(f, req.ID, why)), nil
	}
	for _, l := range launch {
		lc, _ := prov.Label(l)
		res, _ := f.ask.resources(l)
		a.Launch = append(a.Launch, events.Instance{Label: l, InstanceType: lc.InstanceType, Cores: res.Cores, RAMMB: res.RAMMB,
			Attributes: pool.NodeAttributes})
	}
	accept.onError = errDefers // P2: deferred, the loop goes on
	return append(steps, accept), nil
}

// yieldTo names an unpaused provider of better priority that serves the
// request and has not declined it (P11), or "".
func yieldTo(provs []*launcher.Provider, me *launcher.Provider, req *launcher.Request) string {
	for _, p := range provs {
		if p.Config.Name == me.Config.Name || p.Config.Priority >= me.Config.Priority || p.Paused || req.Declined(p.Config.Name) {
			continue
		}
		if _, ok := p.PoolFor(req.Labels); !ok {
			continue
		}
		errored := false
		for _, l := range req.Labels {
			if _, bad := p.ErroredLabels[l]; bad {
				errored = true
			}
		}
		if !errored {
			return p.Config.Name
		}
	}
	return ""
}

// decideMinReady requests instances for labels below their min-ready
// count. It makes none while one more instance of the label could not
// fit the quota or its pool: the request would only be declined (P23),
// fail and be made again on every pass.
func decideMinReady(f *facts, t *tally, open map[string]int) []step {
	var steps []step
	for _, lc := range f.prov.Config.Labels {
		if lc.MinReady == 0 {
			continue
		}
		have := open[lc.Name]
		for _, in := range f.insts {
			if in.Label == lc.Name && in.RequestID == "" && in.State == events.InstanceReady {
				have++
			}
		}
		if have >= lc.MinReady {
			continue
		}
		pool, ok := f.prov.PoolFor([]string{lc.Name})
		needed, _, err := need(f, []string{lc.Name})
		if !ok || err != nil || over(t.used, needed, *f.quota) != "" || poolOver(t.poolUsed[pool.Name], needed, pool) != "" {
			steps = append(steps, step{log: "min-ready instance would not fit; none requested", attrs: []any{"label", lc.Name}, debug: true})
			continue
		}
		for ; have < lc.MinReady; have++ {
			steps = append(steps, step{name: "node-request.create",
				cmd: &lcmd.CreateRequest{Labels: []string{lc.Name}, Requestor: MinReadyRequestor, MinReady: true}})
		}
	}
	return steps
}
