package launcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/storage/kv"
)

// MinReadyRequestor is the requestor of the requests the launcher makes
// to keep min-ready instances (P12).
const MinReadyRequestor = "launcher:min-ready"

// DefaultLaunchRetries bounds the launches tried per instance of a
// request when the provider's configuration sets none.
const DefaultLaunchRetries = 3

// errStop ends a runner whose generation is gone.
var errStop = errors.New("launcher: provider generation gone")

// createOp is one create in flight.
type createOp struct {
	m     driver.CreateMachine
	req   string
	label string
}

// runner handles one provider generation: one goroutine advancing every
// create and delete of the provider (P5, P17).
type runner struct {
	l    *Launcher
	name string
	gen  uint64
	d    driver.Driver
	log  *slog.Logger

	creates map[string]*createOp
	deletes map[string]driver.Machine
	// quota and types are the driver's last good answers (P14).
	quota    *driver.Quota
	types    map[string]driver.Resources
	attempts map[string]int
	// hosts is set when the driver hands out fixed hosts (static).
	hosts *hostState
	// retry asks for a timed look again (a request left for a host).
	retry bool
	// open is the runner's incremental view of the open requests.
	open *openView
}

func newRunner(l *Launcher, name string, gen uint64, d driver.Driver) *runner {
	return &runner{l: l, name: name, gen: gen, d: d, log: l.log.With("provider", name, "generation", gen),
		creates: map[string]*createOp{}, deletes: map[string]driver.Machine{},
		types: map[string]driver.Resources{}, attempts: map[string]int{}, hosts: newHostState(d), open: newOpenView(name)}
}

func (r *runner) run(ctx context.Context) error {
	notify := r.l.cfg.State.Notifier()
	defer func() {
		r.l.m.machines.DeleteLabelValues(r.name, "create")
		r.l.m.machines.DeleteLabelValues(r.name, "delete")
	}()
	for {
		reqCh, instCh := notify.Table(launcher.RequestsTable), notify.Table(launcher.InstancesTable)
		provCh, tenCh := notify.Table(launcher.ProvidersTable), notify.Table(launcher.TenantsTable)
		start := r.l.cfg.Clock.Now()
		busy, err := r.pass(ctx)
		r.l.m.pass.Observe(r.l.cfg.Clock.Now().Sub(start).Seconds())
		if errors.Is(err, errStop) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// P2: an unexpected error defers; the loop goes on.
			r.log.Warn("launcher pass failed; will retry", "err", err)
			busy = true
		}
		r.l.m.machines.WithLabelValues(r.name, "create").Set(float64(len(r.creates)))
		r.l.m.machines.WithLabelValues(r.name, "delete").Set(float64(len(r.deletes)))
		var tick <-chan time.Time
		if busy || len(r.creates) > 0 || len(r.deletes) > 0 {
			tick = r.l.cfg.Clock.After(r.l.cfg.PollInterval)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-reqCh:
		case <-instCh:
		case <-provCh:
		case <-tenCh:
		case <-tick:
		}
	}
}

// submit runs one command on its own (a step that must read its
// outcome before anything else goes on).
func (r *runner) submit(ctx context.Context, name string, c commands.Command) error {
	_, err := r.l.cfg.Pipeline.Run(ctx, name, commands.Request{Actor: "system:launcher"}, c)
	r.count(name, err)
	return err
}

// submitGroup runs a group of steps' commands as one entry (RunGroup)
// and returns each one's error.
func (r *runner) submitGroup(ctx context.Context, group []step) []error {
	cmds := make([]commands.Grouped, len(group))
	for i, s := range group {
		cmds[i] = commands.Grouped{Name: s.name, Req: commands.Request{Actor: "system:launcher"}, Cmd: s.cmd}
	}
	_, errs := r.l.cfg.Pipeline.RunGroup(ctx, cmds)
	r.l.m.group.Observe(float64(len(group)))
	for i, s := range group {
		r.count(s.name, errs[i])
	}
	return errs
}

// batcher returns a batcher submitting its groups with ctx.
func (r *runner) batcher(ctx context.Context) *batcher {
	return newBatcher(func(group []step) []error { return r.submitGroup(ctx, group) })
}

// count counts a decision by its outcome.
func (r *runner) count(name string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var ce *commands.ConflictError
		if errors.As(err, &ce) {
			outcome = "conflict"
		}
	}
	r.l.m.decisions.WithLabelValues(r.name, name+":"+outcome).Inc()
}

func isConflict(err error) bool {
	var ce *commands.ConflictError
	var nf *commands.NotFoundError
	return errors.As(err, &ce) || errors.As(err, &nf)
}

// snapshot reads the provider's state; insts are its instances, from
// the runner's view once synced to raw.
type snapshot struct {
	raw   kv.Reader
	v     projections.View
	prov  *launcher.Provider
	insts []*launcher.Instance
	close func()
}

func (r *runner) read() (*snapshot, error) {
	snap := r.l.cfg.State.ReadSnapshot()
	v := projections.NewView(snap)
	s := &snapshot{raw: snap, v: v, close: func() { snap.Close() }}
	p, err := launcher.GetProvider(v, r.name)
	if errors.Is(err, projections.ErrNotFound) || (err == nil && p.ConfigIndex != r.gen) {
		s.close()
		return nil, errStop
	} else if err != nil {
		s.close()
		return nil, err
	}
	s.prov = p
	return s, nil
}

// pass advances the machines, then decides on requests; busy asks for a
// timed look again. What the machines report goes to the log as one
// group before the pass reads the state; the housekeeping and decisions
// the pass then takes go as another (or a few: group.go).
func (r *runner) pass(ctx context.Context) (busy bool, err error) {
	if err := r.advance(ctx); err != nil {
		return true, err
	}
	s, err := r.read()
	if err != nil {
		return true, err
	}
	defer s.close()
	n, err := r.open.sync(s.raw, s.v)
	if err != nil {
		return true, err
	}
	s.insts = r.open.instances()
	r.l.m.rereads.WithLabelValues(r.name).Add(float64(n))
	r.refreshQuota(ctx)
	r.retry = false
	if r.hosts != nil {
		r.hosts.reach, r.hosts.probed = map[string]error{}, map[string]error{}
		if changed, err := r.syncHosts(ctx, s); err != nil || changed {
			return true, err // P29: decide on the registered hosts next pass
		}
	}
	b := r.batcher(ctx)
	defer b.flush() // the housekeeping, should the pass end before deciding
	if err := r.housekeep(ctx, s, b); err != nil {
		return true, err
	}
	return r.handle(ctx, s, b)
}

// advance steps every machine once and records what finished, as one
// group.
func (r *runner) advance(ctx context.Context) error {
	now := r.l.cfg.Clock.Now()
	var first error
	record := func(err error) {
		if err != nil && !isConflict(err) && first == nil {
			first = err
		}
	}
	b := r.batcher(ctx)
	for _, id := range sortedKeys(r.creates) {
		op := r.creates[id]
		done, err := op.m.Advance(ctx, now)
		if !done && err == nil {
			continue
		}
		delete(r.creates, id)
		r.created(ctx, b, id, op, err, record)
	}
	for _, id := range sortedKeys(r.deletes) {
		done, err := r.deletes[id].Advance(ctx, now)
		if !done && err == nil {
			continue
		}
		delete(r.deletes, id)
		if err != nil {
			// P18: name the instance; it is tried again.
			r.log.Warn("deleting instance failed; will retry", "instance", id, "err", err)
			continue
		}
		b.add(step{name: "instance.remove", cmd: lcmd.RemoveInstance{ID: id}}, record)
	}
	b.flush()
	return first
}

// created queues what the end of a create records; record receives the
// outcome of the last command it takes.
func (r *runner) created(ctx context.Context, b *batcher, id string, op *createOp, cerr error, record func(error)) {
	if cerr == nil {
		res := op.m.Result()
		b.add(step{name: "instance.ready", about: op.req, cmd: lcmd.SetInstanceState{ID: id, State: events.InstanceReady,
			ExternalID: res.ExternalID, Addresses: res.Addresses}}, record)
		return
	}
	log := r.log.With("instance", id, "request", op.req, "label", op.label)
	state := func(st string) step {
		return step{name: "instance." + st, about: op.req, cmd: lcmd.SetInstanceState{ID: id, State: st, Reason: cerr.Error()}}
	}
	switch {
	case errors.Is(cerr, driver.ErrQuota):
		// P24: aborted, not failed; pause and relaunch when quota allows.
		log.Info("launch refused by the cloud for quota; instance aborted, provider pauses", "err", cerr)
		b.add(state(events.InstanceAborted), func(err error) {
			if err != nil {
				record(err)
				return
			}
			b.add(step{name: "provider.pause", cmd: lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Paused: true,
				RequestID: op.req, Reason: cerr.Error()}}, record)
		})
	case errors.Is(cerr, driver.ErrPermanent):
		// P2: the label is errored; its request fails now, not in a loop.
		log.Warn("permanent error launching; label errored", "err", cerr)
		b.add(state(events.InstanceFailed), func(err error) {
			if err != nil {
				record(err)
				return
			}
			record(r.failRequest(ctx, op.req, cerr.Error(), op.label))
		})
	default:
		log.Info("launch failed; will retry", "err", cerr)
		r.attempts[op.req]++
		b.add(state(events.InstanceFailed), record)
	}
}

func (r *runner) failRequest(ctx context.Context, reqID, reason, label string) error {
	snap := r.l.cfg.State.ReadSnapshot()
	req, err := launcher.GetRequest(projections.NewView(snap), reqID)
	snap.Close()
	if errors.Is(err, projections.ErrNotFound) {
		return nil // vanished (P20)
	} else if err != nil {
		return err
	}
	delete(r.attempts, reqID)
	f := lcmd.Fail{RequestID: reqID, RequestModifyIndex: req.ModifyIndex, Provider: r.name, Reason: reason}
	if label != "" {
		f.LabelError, f.ConfigIndex = label, r.gen
	}
	if !req.Open() {
		if label == "" {
			return nil
		}
		f.RequestID = "" // only the label error
	}
	if f.RequestID == "" {
		return r.submit(ctx, "provider.pause", lcmd.Pause{Provider: r.name, ConfigIndex: r.gen, Reason: "label " + label + " errored"})
	}
	return r.submit(ctx, "node-request.fail", f)
}

func (r *runner) refreshQuota(ctx context.Context) {
	q, err := r.d.Quota(ctx)
	if err != nil {
		if r.quota != nil {
			r.log.Info("provider quota unavailable; using the cached value", "err", err) // P14: a transient error keeps the cached quota
		}
		return
	}
	r.quota = &q
}

// resources returns the need of one instance of label, from the driver
// or its cache (P14); ok false defers.
func (r *runner) resources(ctx context.Context, prov *launcher.Provider, label string) (driver.Resources, error) {
	lc, _ := prov.Label(label)
	res, err := r.d.InstanceType(ctx, lc.InstanceType)
	if err == nil {
		r.types[lc.InstanceType] = res
		return res, nil
	}
	if errors.Is(err, driver.ErrPermanent) {
		return driver.Resources{}, err
	}
	if c, ok := r.types[lc.InstanceType]; ok {
		return c, nil
	}
	return driver.Resources{}, err
}

// housekeep starts machines the state asks for: creates of building
// instances nobody advances (after a failover or a new generation) and
// deletes of used, failed and aborted instances, each once b submitted
// its marking deleting.
func (r *runner) housekeep(ctx context.Context, s *snapshot, b *batcher) error {
	for _, in := range s.insts {
		switch in.State {
		case events.InstanceBuilding:
			if r.creates[in.ID] == nil {
				r.startCreate(in.ID, in.RequestID, in.Label, in.InstanceType, in.Pool, in.Attributes)
			}
		case events.InstanceUsed, events.InstanceFailed, events.InstanceAborted:
			if r.hosts != nil && in.State == events.InstanceUsed {
				if returned, err := r.returnHost(ctx, s, in); err != nil || returned {
					if err != nil {
						r.log.Warn("cannot return static host", "instance", in.ID, "err", err) // P18: the log names the instance
					}
					continue
				}
			}
			b.add(step{name: "instance.deleting", cmd: lcmd.SetInstanceState{ID: in.ID, State: events.InstanceDeleting}}, func(err error) {
				if err != nil && !isConflict(err) {
					// P18: name the instance.
					r.log.Warn("cannot mark instance deleting", "instance", in.ID, "err", err)
					return
				}
				r.deletes[in.ID] = r.d.Delete(in.ID, in.ExternalID)
			})
		case events.InstanceDeleting:
			if r.deletes[in.ID] == nil {
				r.deletes[in.ID] = r.d.Delete(in.ID, in.ExternalID)
			}
		}
	}
	return nil
}

func (r *runner) startCreate(id, req, label, typ, pool string, attrs map[string]string) {
	r.creates[id] = &createOp{m: r.d.Create(driver.Spec{InstanceID: id, Label: label, InstanceType: typ, Pool: pool, Attributes: attrs}),
		req: req, label: label}
}

// need sums the resources of one instance per label.
func (r *runner) need(ctx context.Context, prov *launcher.Provider, labels []string) (launcher.Usage, string, error) {
	var u launcher.Usage
	for _, l := range labels {
		res, err := r.resources(ctx, prov, l)
		if err != nil {
			return u, l, err
		}
		u = u.Add(launcher.Usage{Servers: 1, Cores: res.Cores, RAMMB: res.RAMMB})
	}
	return u, "", nil
}

// usage is what the provider's instances hold, all of them and per pool
// (building ones included, P19).
func usage(insts []*launcher.Instance) (launcher.Usage, map[string]launcher.Usage) {
	pools := map[string]launcher.Usage{}
	var all launcher.Usage
	for _, in := range insts {
		u := launcher.Usage{Servers: 1, Cores: in.Cores, RAMMB: in.RAMMB}
		all = all.Add(u)
		pools[in.Pool] = pools[in.Pool].Add(u)
	}
	return all, pools
}

// over names the first quota limit used+need passes, or "".
func over(used, need launcher.Usage, q driver.Quota) string {
	for _, c := range []struct {
		what             string
		limit, use, want int
	}{
		{"quota instances", q.Instances, used.Servers, need.Servers}, {"quota cores", q.Cores, used.Cores, need.Cores},
		{"quota ram", q.RAMMB, used.RAMMB, need.RAMMB},
	} {
		if c.limit > 0 && c.use+c.want > c.limit {
			return fmt.Sprintf("%s: %d needed, %d free", c.what, c.want, max(c.limit-c.use, 0))
		}
	}
	return ""
}

func needOf(what string, n launcher.Usage) int {
	switch {
	case strings.HasSuffix(what, "instances") || strings.HasSuffix(what, "servers"):
		return n.Servers
	case strings.HasSuffix(what, "cores"):
		return n.Cores
	}
	return n.RAMMB
}

// poolOver names the first pool limit poolUsed+need passes, or "".
func poolOver(poolUsed, need launcher.Usage, p *events.ProviderPool) string {
	t := poolUsed.Add(need)
	for _, c := range []struct {
		what       string
		limit, use int
	}{{"pool max-servers", p.MaxServers, t.Servers}, {"pool max-cores", p.MaxCores, t.Cores}, {"pool max-ram", p.MaxRAMMB, t.RAMMB}} {
		if c.limit > 0 && c.use > c.limit {
			return fmt.Sprintf("%s: %d needed, %d free", c.what, needOf(c.what, need), max(c.limit-(c.use-needOf(c.what, need)), 0))
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
