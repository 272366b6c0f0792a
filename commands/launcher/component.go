package launcher

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// validServer checks a component's server name.
func validServer(kind, server string) error {
	if kind != events.ComponentLauncher {
		return commands.Invalid("Kind", "%q is not a component kind (%s)", kind, events.ComponentLauncher)
	}
	if server == "" || len(server) > 256 || strings.ContainsAny(server, "/\x00") {
		return commands.Invalid("Server", "%q must be 1-256 bytes without '/'", server)
	}
	return nil
}

// RegisterComponent registers a component with what it runs now (P10).
// Registering what is registered already decides nothing: the log
// records changes only, and liveness is the leader's (heartbeats append
// nothing).
type RegisterComponent struct {
	Component events.Component
}

var _ commands.Command = RegisterComponent{}

// Validate implements commands.Command.
func (r RegisterComponent) Validate() error {
	return validServer(r.Component.Kind, r.Component.Server)
}

// Decide implements commands.Command.
func (r RegisterComponent) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	old, err := launcher.GetComponent(v, r.Component.ComponentID())
	switch {
	case err == nil && samePools(old.Pools, r.Component.Pools):
		return commands.Decision{}, nil
	case err != nil && !errors.Is(err, projections.ErrNotFound):
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.ComponentRegistered{Component: r.Component}}}, nil
}

// samePools reports whether a and b list the same pools, in order (an
// empty list and none are the same).
func samePools(a, b []events.LauncherPool) bool {
	return slices.EqualFunc(a, b, func(x, y events.LauncherPool) bool {
		return x.Provider == y.Provider && x.Pool == y.Pool && x.ConfigIndex == y.ConfigIndex && x.Driver == y.Driver &&
			x.Priority == y.Priority && slices.Equal(x.Labels, y.Labels)
	})
}

// DeregisterComponent removes a component; one already gone decides
// nothing. With ModifyIndex set it removes the component only as read:
// a stale component that heartbeat meanwhile stays.
type DeregisterComponent struct {
	Kind, Server string
	// ModifyIndex, when set, is the component's modify index as read.
	ModifyIndex uint64
}

var _ commands.Command = DeregisterComponent{}

// Validate implements commands.Command.
func (d DeregisterComponent) Validate() error { return validServer(d.Kind, d.Server) }

// Decide implements commands.Command.
func (d DeregisterComponent) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	id := events.Component{Kind: d.Kind, Server: d.Server}.ComponentID()
	if _, err := launcher.GetComponent(v, id); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, nil
	} else if err != nil {
		return commands.Decision{}, err
	}
	pre := events.Precondition{Table: launcher.ComponentsTable, Key: id, Op: events.Exists}
	if d.ModifyIndex != 0 {
		pre = events.Precondition{Table: launcher.ComponentsTable, Key: id, Op: events.ModifyIndex, Index: d.ModifyIndex}
	}
	return commands.Decision{Events: []events.Payload{&events.ComponentDeregistered{Kind: d.Kind, Server: d.Server}},
		Preconditions: []events.Precondition{pre}}, nil
}
