package agent

import (
	"log/slog"

	"github.com/ordoplane/ordo/logtee"
)

// teeLogger wraps cfg's logger in a logtee.Tee, so that the server's
// and the client's GET /v1/agent/monitor stream every line the agent
// logs (at the reader's level, which may be below cfg's), and returns it.
func teeLogger(cfg *Config) *logtee.Tee {
	tee := logtee.New(cfg.Logger.Handler())
	cfg.Logger = slog.New(tee)
	return tee
}
