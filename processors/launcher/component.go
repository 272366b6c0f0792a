package launcher

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// The launcher's component (P10): the pools it runs — every pool of each
// provider generation it has a runner for — registered on the log as the
// component "launcher/<Server>", so every server sees them live. It is
// registered again whenever that set changes and every Heartbeat, and
// deregistered when the launcher stops. A launcher component not heard
// from for StaleAfter heartbeats (a server that stopped without
// deregistering) is removed by a live launcher.

// StaleAfter is how many heartbeats a component may miss before a live
// launcher deregisters it.
const StaleAfter = 3

// component tracks what this launcher registered.
type component struct {
	l *Launcher
	// last is what was registered last; nil when nothing is (or the last
	// registration failed).
	last []events.LauncherPool
}

// pools returns the pools of the running generations, by provider and pool.
func pools(running map[string]*generation) []events.LauncherPool {
	out := []events.LauncherPool{}
	for _, g := range running {
		for _, p := range g.cfg.Pools {
			out = append(out, events.LauncherPool{Provider: g.cfg.Name, Pool: p.Name, ConfigIndex: g.index, Driver: g.cfg.Driver,
				Priority: g.cfg.Priority, Labels: p.Labels})
		}
	}
	slices.SortFunc(out, func(a, b events.LauncherPool) int {
		if a.Provider != b.Provider {
			return compare(a.Provider, b.Provider)
		}
		return compare(a.Pool, b.Pool)
	})
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

// register registers ps when they differ from the last registration, or
// always when heartbeat.
func (c *component) register(ctx context.Context, ps []events.LauncherPool, heartbeat bool) {
	if !heartbeat && c.last != nil && reflect.DeepEqual(c.last, ps) {
		return
	}
	cmd := lcmd.RegisterComponent{Component: events.Component{Kind: events.ComponentLauncher, Server: c.l.cfg.Server, Pools: ps}}
	if _, err := c.l.cfg.Pipeline.Run(ctx, "component.register", commands.Request{Actor: "system:launcher"}, cmd); err != nil {
		if ctx.Err() == nil {
			c.l.log.Warn("launcher: cannot register its pools; will retry", "server", c.l.cfg.Server, "err", err)
		}
		c.last = nil
		return
	}
	if !heartbeat {
		c.l.log.Info("launcher: pools registered", "server", c.l.cfg.Server, "pools", len(ps))
	}
	c.last = ps
	c.l.m.pools.Set(float64(len(ps)))
}

// sweep deregisters launcher components of other servers not heard from
// for StaleAfter heartbeats.
func (c *component) sweep(ctx context.Context) error {
	snap := c.l.cfg.State.Store().Snapshot()
	comps, err := launcher.Components(projections.NewView(snap), events.ComponentLauncher)
	snap.Close()
	if err != nil {
		return fmt.Errorf("launcher: read components: %w", err)
	}
	cutoff := c.l.cfg.Clock.Now().Add(-StaleAfter * c.l.cfg.Heartbeat).UnixNano()
	for _, o := range comps {
		if o.Server == c.l.cfg.Server || o.LastSeen >= cutoff {
			continue
		}
		c.l.log.Info("launcher: deregistering a stale launcher component", "server", o.Server,
			"last_seen", time.Unix(0, o.LastSeen).UTC())
		_, err := c.l.cfg.Pipeline.Run(ctx, "component.deregister", commands.Request{Actor: "system:launcher"},
			lcmd.DeregisterComponent{Kind: o.Kind, Server: o.Server, ModifyIndex: o.ModifyIndex})
		if err != nil && !isConflict(err) && ctx.Err() == nil {
			c.l.log.Warn("launcher: cannot deregister a stale component", "server", o.Server, "err", err)
		}
	}
	return nil
}

// deregister removes this launcher's component as it stops; ctx may be
// done already, so it gets a short context of its own.
func (c *component) deregister(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := c.l.cfg.Pipeline.Run(dctx, "component.deregister", commands.Request{Actor: "system:launcher"},
		lcmd.DeregisterComponent{Kind: events.ComponentLauncher, Server: c.l.cfg.Server})
	if err != nil {
		// Not the leader any more, say: the next leader's launcher removes it once stale.
		c.l.log.Info("launcher: cannot deregister its pools as it stops", "server", c.l.cfg.Server, "err", err)
	}
	c.l.m.pools.Set(0)
}
