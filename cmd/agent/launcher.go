package agent

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/processors/launcher/driver/static"
)

// LauncherConfig tunes the launcher (processors/launcher, docs/launcher.md).
type LauncherConfig struct {
	// Disabled runs no launcher on this server: providers and node
	// requests are recorded but nothing is launched.
	Disabled bool `json:"Disabled"`
	// PollInterval is how often a runner with machines in flight, or
	// paused, looks again without a state change; default 1s.
	PollInterval time.Duration `json:"PollInterval"`
	// Heartbeat is how often the launcher reports its component alive to
	// the leader; a component silent for three heartbeats is
	// deregistered. Default 30s.
	Heartbeat time.Duration `json:"Heartbeat"`
}

// launcherDrivers are the driver factories the agent's launcher knows.
// A provider naming another driver gets no runner; the launcher logs
// "provider names an unknown driver".
func launcherDrivers() map[string]launcher.Factory {
	return map[string]launcher.Factory{
		"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
			if cfg.Sim == nil {
				return nil, fmt.Errorf("provider %q: the sim driver needs a sim block", cfg.Name)
			}
			return sim.New(*cfg.Sim, sim.Faults{}), nil
		},
		"static": func(cfg events.ProviderConfig) (driver.Driver, error) {
			if cfg.Static == nil {
				return nil, fmt.Errorf("provider %q: the static driver needs a static block", cfg.Name)
			}
			return static.New(*cfg.Static, static.Config{}), nil
		},
	}
}

// newLauncher returns the leader-only launcher, nil when disabled. Its
// metrics go to the agent's registry.
func (a *Agent) newLauncher() (*launcher.Launcher, error) {
	if a.cfg.Launcher.Disabled {
		return nil, nil
	}
	return launcher.New(launcher.Config{Pipeline: a.pipeline, State: a.fsm, Drivers: a.withLocalDriver(launcherDrivers()),
		PollInterval: a.cfg.Launcher.PollInterval, Logger: a.log, Registerer: a.reg, Heartbeat: a.cfg.Launcher.Heartbeat,
		Liveness: a.liveness, // in process: the launcher runs only while this server leads
		Server:   a.id})      // its errors name the launcher; its pools are the component "launcher/<server id>" (P10)
}

var _ httpapi.Components = (*launcher.Liveness)(nil)

// componentLiveness is the tracker newLiveness returns.
type componentLiveness = launcher.Liveness

// newLiveness returns the leader's component liveness tracker. Every
// server runs it while it leads, launcher or not, so the components of a
// server that stopped without deregistering go once stale.
func (a *Agent) newLiveness() (*componentLiveness, error) {
	return launcher.NewLiveness(launcher.LivenessConfig{Pipeline: a.pipeline, State: a.fsm, TTL: 3 * a.cfg.Launcher.Heartbeat,
		Logger: a.log, Registerer: a.reg})
}
