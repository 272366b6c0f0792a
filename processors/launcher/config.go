package launcher

import (
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/clock"
)

// DefaultConfig returns the defaults New gives zero fields, without the
// required fields (Pipeline, State, Drivers).
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, PollInterval: time.Second, Logger: slog.Default(), Server: DefaultServer,
		Heartbeat: DefaultHeartbeat}
}
