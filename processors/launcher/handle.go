package launcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections/launcher"
)

// handle decides on the provider's pending requests (relaunches), its
// pause, the open requests in priority order and min-ready.
func (r *runner) handle(ctx context.Context, s *snapshot) (bool, error) {
	prov := s.prov
	var q driver.Quota
	if r.quota != nil {
		q = *r.quota
	}
	used, poolUsed := usage(s.insts)
	paused := prov.Paused
	// P9: until the driver has told the quota once, nothing is accepted
	// or launched on a guess; the runner looks again.
	busy := paused || r.quota == nil
	retries := prov.Config.LaunchRetries
	if retries == 0 {
		retries = DefaultLaunchRetries
	}
	minReadyOpen := map[string]int{}

	// Requests this provider accepted: relaunch what is missing (P24).
	var pending []*launcher.Request
	for _, req := range r.open.pending {
		if req.MinReady && len(req.Labels) == 1 {
			minReadyOpen[req.Labels[0]]++
		}
		if req.Provider == r.name {
			pending = append(pending, req)
		}
	}
	r.l.m.open.WithLabelValues(r.name, events.RequestPending).Set(float64(len(pending)))
	pausedFor := ""
	if paused {
		pausedFor = prov.PausedRequest
	}
	for _, req := range pending {
		missing := r.missing(s, req)
		if len(missing) == 0 {
			if req.ID == pausedFor {
				if err := r.unpause(ctx, "request "+req.ID+" has its instances"); err != nil {
					return true, err
				}
				paused, pausedFor = false, ""
			}
			continue
		}
		if r.attempts[req.ID] >= retries {
			if err := r.failRequest(ctx, req.ID, "launch failed "+itoa(r.attempts[req.ID])+" times", ""); err != nil && !isConflict(err) {
				return true, err
			}
			continue
		}
		pool, ok := prov.PoolFor(req.Labels)
		if !ok {
			continue
		}
		need, _, err := r.need(ctx, prov, missing)
		if err != nil {
			if paused && req.ID == pausedFor {
				return true, r.releasePaused(ctx, req, err) // P27: an error in the request paused for releases it and unpauses
			}
			continue
		}
		if r.quota == nil {
			continue // P9: quota not known yet
		}
		why := over(used, need, q)
		if why == "" {
			why = poolOver(poolUsed[pool.Name], need, pool)
		}
		if why != "" {
			busy = true
			if !paused {
				r.log.Info("pool short of quota for request; pausing", "request", req.ID, "pool", pool.Name, "reason", why) // P25: a pool short of quota says so at info
				if err := r.submit(ctx, "provider.pause", lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Paused: true, RequestID: req.ID, Reason: why}); err != nil {
					return true, err
				}
				paused, pausedFor = true, req.ID
			}
			continue
		}
		for _, label := range missing {
			lc, _ := prov.Label(label)
			res, _ := r.resources(ctx, prov, label)
			l := &lcmd.Launch{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex, Instance: events.Instance{
				Provider: r.name, ConfigIndex: r.gen, Pool: pool.Name, Label: label, InstanceType: lc.InstanceType,
				Cores: res.Cores, RAMMB: res.RAMMB, Attributes: pool.NodeAttributes}}
			if err := r.submit(ctx, "instance.launch", l); err != nil {
				if isConflict(err) {
					break // the request changed: decided again next pass
				}
				if paused && req.ID == pausedFor {
					return true, r.releasePaused(ctx, req, err) // P27: an error in the request paused for releases it and unpauses
				}
				return true, err
			}
			r.startCreate(l.ID(), req.ID, label, lc.InstanceType, pool.Name, pool.NodeAttributes)
			u := launcher.Usage{Servers: 1, Cores: res.Cores, RAMMB: res.RAMMB}
			used, poolUsed[pool.Name] = used.Add(u), poolUsed[pool.Name].Add(u)
			// A later Launch of the same request needs its new modify index.
			break
		}
		busy = true
		if req.ID == pausedFor {
			if err := r.unpause(ctx, "quota allows request "+req.ID); err != nil {
				return true, err
			}
			paused, pausedFor = false, ""
		}
	}
	if paused && pausedFor != "" && !slices.ContainsFunc(pending, func(q *launcher.Request) bool { return q.ID == pausedFor }) {
		// The request it paused for is gone or no longer ours.
		if err := r.unpause(ctx, "request "+pausedFor+" no longer pending here"); err != nil {
			return true, err
		}
		paused = false
	}

	// Requests no provider took yet, in priority order (P11).
	provs, err := launcher.Providers(s.v)
	if err != nil {
		return true, err
	}
	ready := readyByPool(s.insts)
	if r.hosts != nil {
		ready = r.readyHosts(s)
	}
	r.open.setKey(provs, quotaKey(r.quota))
	r.open.setCheckKey(quotaKey(r.quota), prov.ErroredLabels)
	r.l.m.open.WithLabelValues(r.name, events.RequestRequested).Set(float64(len(r.open.requested)))
	for _, req := range r.open.requested {
		if req.MinReady && len(req.Labels) == 1 {
			minReadyOpen[req.Labels[0]]++
		}
		if req.Declined(r.name) || r.open.asideStill(req) || (paused && r.open.checkedStill(req)) {
			continue // declined, waiting on the providers or the quota, or paused with nothing to decline
		}
		if err := r.consider(ctx, s, provs, req, q, &used, poolUsed, ready, &paused); err != nil {
			return true, err
		}
	}
	if !paused && r.quota != nil && r.hosts == nil {
		if err := r.minReady(ctx, s, minReadyOpen, used, poolUsed); err != nil {
			return true, err
		}
	}
	return busy || paused || r.retry, nil
}

// missing returns the labels of req that have no live instance of it.
func (r *runner) missing(s *snapshot, req *launcher.Request) []string {
	have := map[string]int{}
	for _, in := range s.insts {
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

func (r *runner) unpause(ctx context.Context, reason string) error {
	return r.submit(ctx, "provider.unpause", lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Paused: false, Reason: reason})
}

// releasePaused handles an error while paused (P27): the provider
// unpauses and the request goes back to every provider.
func (r *runner) releasePaused(ctx context.Context, req *launcher.Request, cause error) error {
	r.log.Warn("error while paused; unpausing and releasing the request", "request", req.ID, "err", cause)
	if err := r.submit(ctx, "node-request.release", lcmd.Release{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex,
		Provider: r.name, Reason: cause.Error()}); err != nil && !isConflict(err) {
		return err
	}
	return r.unpause(ctx, "error while paused: "+cause.Error())
}

// readyByPool indexes the ready, unassigned instances by pool and label
// (P3: the provider's own pool, from the cache).
func readyByPool(insts []*launcher.Instance) map[string][]*launcher.Instance {
	out := map[string][]*launcher.Instance{}
	for _, in := range insts {
		if in.State == events.InstanceReady && in.RequestID == "" {
			k := in.Pool + "\x00" + in.Label
			out[k] = append(out[k], in)
		}
	}
	return out
}

// consider decides on one requested request.
func (r *runner) consider(ctx context.Context, s *snapshot, provs []*launcher.Provider, req *launcher.Request,
	q driver.Quota, used *launcher.Usage, poolUsed map[string]launcher.Usage, ready map[string][]*launcher.Instance, paused *bool) error {
	prov := s.prov
	log := r.log.With("request", req.ID, "requestor", req.Requestor)
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
		return r.decline(ctx, log, req, reason)
	}
	for _, l := range req.Labels {
		if why, bad := prov.ErroredLabels[l]; bad {
			// P2: accepted and failed at once, not looped on.
			log.Info("request for an errored label fails", "label", l, "reason", why)
			return ignoreConflict(r.submit(ctx, "node-request.fail", lcmd.Fail{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex,
				Provider: r.name, Reason: "label " + l + " errored: " + why}))
		}
	}
	if better := yieldTo(provs, prov, req); better != "" {
		r.open.setAside(req) // until the providers change
		return nil           // P11: a provider of better priority can take it
	}
	need, label, err := r.need(ctx, prov, req.Labels)
	if errors.Is(err, driver.ErrPermanent) {
		return ignoreConflict(r.submit(ctx, "node-request.fail", lcmd.Fail{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex,
			Provider: r.name, Reason: err.Error(), LabelError: label, ConfigIndex: r.gen}))
	} else if err != nil {
		log.Info("instance type resources unavailable; request deferred", "err", err)
		return nil
	}
	if r.quota == nil {
		// P9: nothing is accepted against a quota never read.
		log.Info("provider quota unknown; request deferred")
		return nil
	}
	// P7, P9: what no quota or pool could ever hold is declined, paused or not.
	if why := over(launcher.Usage{}, need, q); why != "" {
		return r.decline(ctx, log, req, "can never be satisfied: "+why)
	}
	if why := poolOver(launcher.Usage{}, need, pool); why != "" {
		return r.decline(ctx, log, req, "can never be satisfied: "+why)
	}
	r.open.markChecked(req)
	if *paused {
		return nil // P7: a paused provider accepts nothing
	}
	// P3: reuse ready instances of the pool (a static provider's hosts,
	// when they answer, P8).
	var assign []lcmd.Assignment
	var launch []string
	chosen := map[string]bool{}
	for _, l := range req.Labels {
		var pick *launcher.Instance
		// A min-ready request wants one more ready instance: handing it
		// a ready one would only churn.
		for _, in := range ready[pool.Name+"\x00"+l] {
			if req.MinReady || pick != nil {
				break
			}
			if !chosen[in.ID] && (r.hosts == nil || r.reachable(ctx, log, req.ID, in)) {
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
	if len(assign) == 0 && len(ready) > 0 {
		log.Debug("no ready instance to reuse", "pool", pool.Name)
	}
	if r.hosts != nil && len(launch) > 0 {
		// A static provider creates nothing and never pauses (P8): a
		// request its hosts can never hold is declined, one whose hosts
		// are busy or unreachable is left for a later pass.
		if why := r.hostsShort(pool.Name, prov, req.Labels); why != "" {
			return r.decline(ctx, log, req, "can never be satisfied: "+why)
		}
		log.Debug("no free reachable static host for request; left for later", "labels", req.Labels)
		r.retry = true
		return nil
	}
	launchNeed, _, err := r.need(ctx, prov, launch)
	if err != nil {
		return nil
	}
	if why, err := launcher.TenantExceeds(s.v, req.Tenant, launchNeed); err != nil {
		return err
	} else if why != "" {
		log.Info("request deferred: tenant at its limit", "tenant", req.Tenant, "reason", why) // P13: tenant limits hold across providers
		return nil
	}
	a := &lcmd.Accept{Provider: r.name, ConfigIndex: r.gen, Pool: pool.Name, RequestID: req.ID, RequestModifyIndex: req.ModifyIndex, Assign: assign}
	why := ""
	if len(launch) > 0 { // reuse needs no quota
		why = over(*used, launchNeed, q)
		if why == "" {
			why = poolOver(poolUsed[pool.Name], launchNeed, pool)
		}
	}
	if why != "" {
		if req.MinReady {
			return r.decline(ctx, log, req, "at quota: "+why) // P23: a min-ready request is declined only at quota
		}
		log.Info("pool short of quota for request; accepting and pausing", "pool", pool.Name, "reason", why) // P25: a pool short of quota says so at info
		a.Partial = true
		if err := r.submit(ctx, "node-request.accept", a); err != nil {
			return ignoreConflict(err)
		}
		*paused = true
		r.consume(assign, ready, pool.Name, req.Labels)
		return r.submit(ctx, "provider.pause", lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Paused: true, RequestID: req.ID, Reason: why})
	}
	for _, l := range launch {
		lc, _ := prov.Label(l)
		res, _ := r.resources(ctx, prov, l)
		a.Launch = append(a.Launch, events.Instance{Label: l, InstanceType: lc.InstanceType, Cores: res.Cores, RAMMB: res.RAMMB,
			Attributes: pool.NodeAttributes})
	}
	if err := r.submit(ctx, "node-request.accept", a); err != nil {
		if !isConflict(err) {
			log.Warn("accepting request failed; deferred", "err", err)
		}
		return nil // P2: deferred, the loop goes on
	}
	r.consume(assign, ready, pool.Name, req.Labels)
	for i, id := range a.Launched() {
		in := a.Launch[i]
		r.startCreate(id, req.ID, in.Label, in.InstanceType, pool.Name, pool.NodeAttributes)
	}
	*used = used.Add(launchNeed)
	poolUsed[pool.Name] = poolUsed[pool.Name].Add(launchNeed)
	return nil
}

// consume drops assigned instances from ready.
func (r *runner) consume(assign []lcmd.Assignment, ready map[string][]*launcher.Instance, pool string, labels []string) {
	if r.hosts != nil {
		labels = nil // a host is indexed under each of its labels
		for k := range ready {
			if l, ok := strings.CutPrefix(k, pool+"\x00"); ok {
				labels = append(labels, l)
			}
		}
	}
	for _, l := range labels {
		k := pool + "\x00" + l
		ready[k] = slices.DeleteFunc(ready[k], func(in *launcher.Instance) bool {
			return slices.ContainsFunc(assign, func(a lcmd.Assignment) bool { return a.InstanceID == in.ID })
		})
	}
}

// logger is what decisions log to.
type logger interface {
	Info(string, ...any)
}

func (r *runner) decline(ctx context.Context, log logger, req *launcher.Request, reason string) error {
	log.Info("declining node request", "reason", reason) // P15: declines are logged at info with the reason
	return ignoreConflict(r.submit(ctx, "node-request.decline", lcmd.Decline{RequestID: req.ID, RequestModifyIndex: req.ModifyIndex,
		Provider: r.name, Reason: reason}))
}

func ignoreConflict(err error) error {
	if isConflict(err) {
		return nil
	}
	return err
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

// minReady requests instances for labels below their min-ready count.
// It makes none while one more instance of the label could not fit the
// quota or its pool: the request would only be declined (P23), fail and
// be made again on every pass.
func (r *runner) minReady(ctx context.Context, s *snapshot, open map[string]int, used launcher.Usage, poolUsed map[string]launcher.Usage) error {
	for _, lc := range s.prov.Config.Labels {
		if lc.MinReady == 0 {
			continue
		}
		have := open[lc.Name]
		for _, in := range s.insts {
			if in.Label == lc.Name && in.RequestID == "" && in.State == events.InstanceReady {
				have++
			}
		}
		if have >= lc.MinReady {
			continue
		}
		pool, ok := s.prov.PoolFor([]string{lc.Name})
		need, _, err := r.need(ctx, s.prov, []string{lc.Name})
		if !ok || err != nil || over(used, need, *r.quota) != "" || poolOver(poolUsed[pool.Name], need, pool) != "" {
			r.log.Debug("min-ready instance would not fit; none requested", "label", lc.Name)
			continue
		}
		for ; have < lc.MinReady; have++ {
			c := &lcmd.CreateRequest{Labels: []string{lc.Name}, Requestor: MinReadyRequestor, MinReady: true}
			if err := r.submit(ctx, "node-request.create", c); err != nil {
				return err
			}
		}
	}
	return nil
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
