package launcher

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
)

// HTTPBeater reports a component alive from a server that does not lead:
// PUT /v1/component/{kind}/{server}/heartbeat through Client, whose
// server forwards it to the leader as any write. Build Client with the
// cluster secret (api.WithHeader with httpapi.ClusterSecretHeader) or a
// management token.
type HTTPBeater struct {
	Client *api.Client
}

var _ Beater = HTTPBeater{}

// Beat implements Beater; a 404 (the leader does not know the component)
// is a *commands.NotFoundError.
func (b HTTPBeater) Beat(ctx context.Context, kind, server string) error {
	err := b.Client.Put(ctx, api.Pathf("/v1/component/%s/%s/heartbeat", kind, server), nil, nil)
	if e, ok := errors.AsType[*api.Error](err); ok && e.Status == http.StatusNotFound {
		return fmt.Errorf("heartbeat of component %s/%s: %w", kind, server, &commands.NotFoundError{Kind: "component", ID: kind + "/" + server})
	}
	if err != nil {
		return fmt.Errorf("heartbeat of component %s/%s: %w", kind, server, err)
	}
	return nil
}
