package commands

import (
	"context"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Grouped is one command of a group (Pipeline.RunGroup).
type Grouped struct {
	// Name names the command, as Run's name does.
	Name string
	// Req identifies the command, as Run's req does.
	Req Request
	// Cmd is the command.
	Cmd Command
}

// RunGroup runs cmds and returns each one's outcome and error, in order.
// They are decided against one view at one time and appended together in
// one raft entry (events.NewGroup), yet each stands on its own: one
// refused (invalid, in conflict) does not refuse the others, each keeps
// its own idempotency key, and at apply each is checked after the ones
// before it in cmds, so its preconditions see their effects. A processor
// commits a pass's decisions this way at the cost of one entry.
func (p *Pipeline) RunGroup(ctx context.Context, cmds []Grouped) ([]Outcome, []error) {
	outs := make([]Outcome, len(cmds))
	errs := make([]error, len(cmds))
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		for i := range errs {
			errs[i] = fmt.Errorf("%w: the server is shutting down", ErrNoLeader)
		}
		return outs, errs
	}
	p.inflight.Add(1)
	p.mu.Unlock()
	defer p.inflight.Done()
	start := p.clock.Now()
	p.runGroup(ctx, cmds, outs, errs)
	took := p.clock.Now().Sub(start).Seconds()
	for i, g := range cmds {
		result := "ok"
		if errs[i] != nil {
			result = fmt.Sprint(Status(errs[i]))
		}
		p.latency.WithLabelValues(g.Name, result).Observe(took)
		if errs[i] != nil && Status(errs[i]) >= 500 {
			p.logger.Warn("command failed", "command", g.Name, "command_id", g.Req.CommandID, "err", errs[i])
		}
	}
	return outs, errs
}

func (p *Pipeline) runGroup(ctx context.Context, cmds []Grouped, outs []Outcome, errs []error) {
	valid := 0
	for i, g := range cmds {
		if errs[i] = g.Cmd.Validate(); errs[i] == nil {
			valid++
		}
	}
	if valid == 0 {
		return
	}
	if p.leader != nil {
		if err := p.leader.AwaitReady(ctx); err != nil {
			for i := range cmds {
				if errs[i] == nil {
					errs[i] = noLeader(err)
				}
			}
			return
		}
	}
	snap := p.store.Snapshot()
	v := projections.NewView(snap)
	now := p.clock.Now().UTC()
	ds := make([]decision, len(cmds))
	var entries []events.Entry
	var pos []int // pos[j] is the command of entries[j]
	for i, g := range cmds {
		if errs[i] != nil {
			continue
		}
		ds[i] = p.decide(v, now, g.Name, g.Req, g.Cmd)
		if ds[i].entry != nil {
			entries = append(entries, *ds[i].entry)
			pos = append(pos, i)
		}
	}
	snap.Close()
	for i := range cmds {
		if errs[i] == nil && ds[i].entry == nil {
			outs[i], errs[i] = p.answered(ctx, ds[i])
		}
	}
	if len(entries) == 0 {
		return
	}
	fail := func(err error) {
		for _, i := range pos {
			errs[i] = err
		}
	}
	entry := &entries[0]
	if len(entries) > 1 {
		g := events.NewGroup(now.UnixNano(), entries)
		entry = &g
	}
	data, err := events.EncodeEntry(entry)
	if err != nil {
		fail(err)
		return
	}
	for _, i := range pos {
		defer p.expect(ds[i])()
	}
	res, err := p.append(ctx, data)
	if err != nil {
		fail(err)
		return
	}
	if len(entries) == 1 {
		outs[pos[0]], errs[pos[0]] = outcome(res)
		return
	}
	if len(res.Group) != len(entries) {
		if _, err := outcome(res); err != nil {
			fail(err) // the group refused whole: malformed
			return
		}
		fail(fmt.Errorf("grouped entry %d applied %d commands of %d", res.Index, len(res.Group), len(entries)))
		return
	}
	for j, i := range pos {
		outs[i], errs[i] = outcome(res.Group[j])
	}
}
