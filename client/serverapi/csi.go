package serverapi

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

// CSIVolume is a volume as the servers answer it, with its write claims.
type CSIVolume struct {
	events.CSIVolume
	// WriteClaims are the volume's write claims by allocation id.
	WriteClaims map[string]events.CSIVolumeClaim
}

// CSIVolume returns volume id of namespace ns as the servers have it
// (secrets redacted): its plugin, external id, context and write claims,
// which the client needs to publish it. An *api.Error with NotFound when
// it does not exist.
func (c *Client) CSIVolume(ctx context.Context, ns, id string) (*CSIVolume, error) {
	var v CSIVolume
	if _, err := c.do(ctx, &api.Request{Method: "GET", Path: api.Pathf("/v1/volume/csi/%s", id),
		Params: url.Values{"namespace": {ns}}}, &v); err != nil {
		return nil, fmt.Errorf("CSI volume %s/%s: %w", ns, id, err)
	}
	return &v, nil
}
