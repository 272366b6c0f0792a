package events

// Components (P10): what a server's processors run, registered on the log
// so that every server sees them live. The launcher registers the pools
// it runs — one per pool of each provider generation it has a runner
// for — when that set changes, and deregisters when it stops or the
// leader finds it stale. Heartbeats are not logged: liveness lives in the
// leader's memory.

// KindComponent is a component; its value is "<kind>/<server>".
const KindComponent = "component"

// ComponentLauncher is the kind of a launcher's component.
const ComponentLauncher = "launcher"

// LauncherPool is one pool a launcher runs: a pool of a provider
// generation.
type LauncherPool struct {
	Provider string `msgpack:"prov" json:"Provider"`
	Pool     string `msgpack:"pool" json:"Pool"`
	// ConfigIndex is the provider generation the runner serves.
	ConfigIndex uint64   `msgpack:"cfg" json:"ConfigIndex"`
	Driver      string   `msgpack:"driver" json:"Driver"`
	Priority    int      `msgpack:"prio" json:"Priority"`
	Labels      []string `msgpack:"labels" json:"Labels"`
}

// Component is one processor of one server.
type Component struct {
	Kind string `msgpack:"kind" json:"Kind"`
	// Server names the server it runs on.
	Server string `msgpack:"server" json:"Server"`
	// Pools are a launcher's pools.
	Pools []LauncherPool `msgpack:"pools,omitempty" json:"Pools"`
}

// ComponentID returns the component's id, "<kind>/<server>".
func (c Component) ComponentID() string { return c.Kind + "/" + c.Server }

// ComponentRegistered records a component running, with what it runs now
// (replacing what it registered before). Logs written before liveness
// moved to the leader's memory repeat it every heartbeat.
type ComponentRegistered struct {
	Component Component `msgpack:"c" json:"Component"`
}

// EntityKeys implements Payload.
func (p *ComponentRegistered) EntityKeys() []Key {
	keys := []Key{{Kind: KindComponent, Value: p.Component.ComponentID()}}
	seen := map[string]bool{}
	for _, pl := range p.Component.Pools {
		if !seen[pl.Provider] {
			seen[pl.Provider] = true
			keys = append(keys, Key{Kind: KindProvider, Value: pl.Provider})
		}
	}
	return keys
}

// ComponentDeregistered records a component stopped.
type ComponentDeregistered struct {
	Kind   string `msgpack:"kind" json:"Kind"`
	Server string `msgpack:"server" json:"Server"`
}

// EntityKeys implements Payload.
func (p *ComponentDeregistered) EntityKeys() []Key {
	return []Key{{Kind: KindComponent, Value: Component{Kind: p.Kind, Server: p.Server}.ComponentID()}}
}

func init() {
	Register(Type{Name: "ComponentRegistered", Version: 1, Topic: "Component", New: func() Payload { return new(ComponentRegistered) }})
	Register(Type{Name: "ComponentDeregistered", Version: 1, Topic: "Component", New: func() Payload { return new(ComponentDeregistered) }})
}
