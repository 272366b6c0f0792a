package volumewatcher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	ccsi "github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// HTTPDetacher is the Detacher of a server: it calls the client API of
// the node that runs the plugin (client/csi), as Nomad's servers call
// their clients.
type HTTPDetacher struct {
	// State is read for the controllers' nodes.
	State State
	// Client makes the calls; default a client with a 30s timeout.
	Client *http.Client
}

var _ Detacher = (*HTTPDetacher)(nil)

// NewHTTPDetacher returns an HTTPDetacher over st.
func NewHTTPDetacher(st State) *HTTPDetacher {
	return &HTTPDetacher{State: st, Client: &http.Client{Timeout: 30 * time.Second}}
}

func request(vol *csi.Volume, c events.CSIVolumeClaim) ccsi.VolumeRequest {
	return ccsi.VolumeRequest{PluginID: vol.PluginID, Namespace: vol.Namespace, VolumeID: vol.ID, ExternalID: vol.ExternalID,
		AllocID: c.AllocID, AccessMode: c.AccessMode, AttachmentMode: c.AttachmentMode, ReadOnly: c.Mode == events.CSIClaimRead,
		Secrets: vol.Secrets, Context: vol.Context}
}

// NodeDetach implements Detacher.
func (d *HTTPDetacher) NodeDetach(ctx context.Context, n *nodes.Node, vol *csi.Volume, c events.CSIVolumeClaim) error {
	return d.post(ctx, n.HTTPAddr, ccsi.PathNodeDetach, request(vol, c))
}

// ControllerDetach implements Detacher: through the first node (by id)
// running a healthy controller that publishes.
func (d *HTTPDetacher) ControllerDetach(ctx context.Context, p *csi.Plugin, vol *csi.Volume, c events.CSIVolumeClaim) error {
	req := request(vol, c)
	if in := p.Nodes[c.NodeID]; in != nil && in.NodeInfo != nil {
		req.NodeID = in.NodeInfo.ID
	}
	snap := d.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	var errs []error
	for _, id := range p.ControllersWith(ControllerCapability) {
		n, err := nodes.Get(v, id)
		if err != nil || n.HTTPAddr == "" {
			continue
		}
		if err := d.post(ctx, n.HTTPAddr, ccsi.PathControllerDetach, req); err != nil {
			errs = append(errs, fmt.Errorf("controller on node %s: %w", id, err))
			continue
		}
		return nil
	}
	if len(errs) == 0 {
		return fmt.Errorf("no reachable controller of plugin %s", p.ID)
	}
	return errors.Join(errs...)
}

// post sends body as JSON to path on the node at addr through api.Client.
func (d *HTTPDetacher) post(ctx context.Context, addr, path string, body any) error {
	hc := d.Client
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c, err := api.New([]string{addr}, api.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	if err := c.Call(ctx, http.MethodPost, path, nil, body, nil); err != nil {
		return fmt.Errorf("%s %s: %w", addr, path, err)
	}
	return nil
}
