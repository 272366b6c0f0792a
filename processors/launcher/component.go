package launcher

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
)

// The launcher's component (P10): the pools it runs — every pool of each
// provider generation it has a runner for — registered on the log as the
// component "launcher/<Server>", so every server sees them live. It is
// registered when that set changes (and again when the leader no longer
// knows it), and deregistered when the launcher stops. Its liveness is no
// log entry: every Heartbeat it reports itself alive to the leader's
// Liveness, which deregisters a component that stops reporting
// (liveness.go).

// Beater reports a component alive to the leader's Liveness: *Liveness
// in process, HTTPBeater from another server. An error wrapping a
// commands.NotFoundError says the component is not registered.
type Beater interface {
	Beat(ctx context.Context, kind, server string) error
}

var _ Beater = (*Liveness)(nil)

// Beat implements Beater in process.
func (l *Liveness) Beat(_ context.Context, kind, server string) error {
	_, err := l.Heartbeat(kind, server)
	return err
}

// component tracks what this launcher registered.
type component struct {
	l *Launcher
	// last is what was registered last; nil when nothing is (or the last
	// registration failed, or the leader no longer knows it).
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

// register registers ps when they differ from the last registration.
func (c *component) register(ctx context.Context, ps []events.LauncherPool) {
	if c.last != nil && reflect.DeepEqual(c.last, ps) {
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
	c.l.log.Info("launcher: pools registered", "server", c.l.cfg.Server, "pools", len(ps))
	c.last = ps
	c.l.m.pools.Set(float64(len(ps)))
}

// beat reports the component alive; when the leader does not know it
// (deregistered as stale, say) it registers again.
func (c *component) beat(ctx context.Context) {
	if c.l.cfg.Liveness == nil || c.last == nil {
		return
	}
	err := c.l.cfg.Liveness.Beat(ctx, events.ComponentLauncher, c.l.cfg.Server)
	var nf *commands.NotFoundError
	switch {
	case errors.As(err, &nf):
		c.l.log.Info("launcher: the leader does not know its component; registering again", "server", c.l.cfg.Server)
		ps := c.last
		c.last = nil
		c.register(ctx, ps)
	case err != nil && ctx.Err() == nil:
		c.l.log.Warn("launcher: cannot report its component alive; will retry", "server", c.l.cfg.Server, "err", err)
	}
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
