package serverapi

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ordoplane/ordo/events"
)

// CSIVolume returns volume id of namespace ns as the servers have it
// (secrets redacted): its plugin, external id and context, which the
// client needs to publish it. An *HTTPError with NotFound when it does
// not exist.
func (c *Client) CSIVolume(ctx context.Context, ns, id string) (*events.CSIVolume, error) {
	var v events.CSIVolume
	if _, err := c.do(ctx, request{method: "GET", path: "/v1/volume/csi/" + url.PathEscape(id),
		query: url.Values{"namespace": {ns}}}, &v); err != nil {
		return nil, fmt.Errorf("CSI volume %s/%s: %w", ns, id, err)
	}
	return &v, nil
}
