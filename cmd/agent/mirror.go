package agent

import (
	"context"

	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/storage/kv"
)

// newMirror builds the Kafka mirror when the configuration has a mirror
// block; nil otherwise. The supervisor runs it while this server leads.
func (a *Agent) newMirror() (*mirror.Mirror, error) {
	if a.cfg.Mirror == nil {
		return nil, nil
	}
	return mirror.New(mirror.Config{Settings: *a.cfg.Mirror, Store: a.store, Applied: a.fsm.Notifier().Applied,
		Logger: a.log, Registerer: a.reg})
}

// Mirror returns the Kafka mirror, nil without a mirror block.
func (a *Agent) Mirror() *mirror.Mirror { return a.mirror }

// mirrorAPI adapts the mirror to the API's httpapi.Mirror.
type mirrorAPI struct{ m *mirror.Mirror }

func (x mirrorAPI) Status(ctx context.Context) any { return x.m.Status(ctx) }

func (x mirrorAPI) Verify(ctx context.Context, r kv.Reader, from uint64) (any, bool, error) {
	rep, err := mirror.Verify(ctx, x.m.Settings(), r, mirror.VerifyOptions{From: from})
	return rep, rep.OK, err
}
