package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/projections"
	pc "github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// createTimeout bounds a create or delete through a plugin's controller.
const createTimeout = 2 * time.Minute

// createVolume creates the body's volume through a controller of its
// plugin — on a client that runs one, over the client API — and
// registers it with what the plugin answered (Nomad's volume create).
// Creating a volume that exists is the plugin's idempotent create and a
// merging register (N18).
func (s *Server) createVolume(w http.ResponseWriter, r *http.Request) error {
	spec, err := s.volumeBody(r) // csi.go
	if err != nil {
		return err
	}
	if err := csi.ValidateVolume(&spec.Volume, spec.Secrets); err != nil {
		return err
	}
	addrs, err := s.controllerAddrs(spec.Volume.PluginID, "CREATE_DELETE_VOLUME")
	if err != nil {
		return err
	}
	req := csi.CreateRequest{PluginID: spec.Volume.PluginID, Name: spec.Volume.ID, Capabilities: spec.Volume.RequestedCapabilities,
		CapacityMin: spec.Volume.RequestedCapacityMin, CapacityMax: spec.Volume.RequestedCapacityMax,
		Parameters: spec.Volume.Parameters, Secrets: spec.Secrets, Topologies: spec.Volume.RequestedTopologies}
	var created csi.CreateResponse
	err = postThrough(r.Context(), addrs, csi.PathControllerCreate, req, &created)
	if err == nil && created.ExternalID == "" {
		err = fmt.Errorf("the controller answered no volume id")
	}
	if err != nil {
		writeJSON(w, http.StatusBadGateway, api.ErrorBody{Error: err.Error(), Status: http.StatusBadGateway})
		return nil
	}
	v := spec.Volume
	v.ExternalID, v.Capacity = created.ExternalID, created.Capacity
	if len(created.Context) > 0 {
		v.Context = created.Context
	}
	if len(created.Topologies) > 0 {
		v.Topologies = created.Topologies
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "volume.create", request(r), csi.Register{Volume: v, Secrets: spec.Secrets})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// deleteVolume deletes the volume through a controller of its plugin,
// then deregisters it (Nomad's volume delete). A volume with claims is
// refused (409, naming them), before the plugin is called.
func (s *Server) deleteVolume(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := volumeTarget(r)
	if err != nil {
		return err
	}
	// The deregister's own checks (exact id, 404; claimed, 409 naming the
	// claims) before the plugin deletes anything.
	snap := s.cfg.FSM.Store().Snapshot()
	v := projections.NewView(snap)
	_, err = csi.Deregister{Namespace: ns, ID: id}.Decide(v, time.Time{}, nil)
	vol, verr := pc.GetVolume(v, ns, id)
	snap.Close()
	if err == nil {
		err = verr
	}
	if err != nil {
		return err
	}
	addrs, err := s.controllerAddrs(vol.PluginID, "CREATE_DELETE_VOLUME")
	if err != nil {
		return err
	}
	req := csi.VolumeRequest{PluginID: vol.PluginID, Namespace: ns, VolumeID: id, ExternalID: vol.ExternalID, Secrets: vol.Secrets}
	if err := postThrough(r.Context(), addrs, csi.PathControllerDelete, req, nil); err != nil {
		writeJSON(w, http.StatusBadGateway, api.ErrorBody{Error: fmt.Sprintf("delete volume %q: %v", id, err), Status: http.StatusBadGateway})
		return nil
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "volume.delete", request(r), csi.Deregister{Namespace: ns, ID: id})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// controllerAddrs returns the client API addresses of the nodes running a
// healthy controller of plugin id with capability, by node id.
func (s *Server) controllerAddrs(id, capability string) ([]string, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	p, err := pc.GetPlugin(v, id)
	if err != nil {
		return nil, commands.Invalid("PluginID", "no CSI plugin %q is registered", id)
	}
	var addrs []string
	for _, nid := range p.ControllersWith(capability) {
		if n, err := nodes.Get(v, nid); err == nil && n.HTTPAddr != "" {
			addrs = append(addrs, n.HTTPAddr)
		}
	}
	if len(addrs) == 0 {
		return nil, &commands.ConflictError{Reason: fmt.Sprintf("CSI plugin %q has no healthy controller with %s", id, capability)}
	}
	return addrs, nil
}

// postThrough posts req to path on each controller in turn until one
// answers 2xx, decoding its answer into out when not nil.
func postThrough(ctx context.Context, addrs []string, path string, req, out any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	var last error
	for _, addr := range addrs {
		u := url.URL{Scheme: "http", Host: addr, Path: path}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
		if err != nil {
			return err
		}
		hreq.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			last = fmt.Errorf("controller at %s: %w", addr, err)
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			last = fmt.Errorf("controller at %s: %s: %s", addr, resp.Status, bytes.TrimSpace(data))
			continue
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("controller at %s: %w", addr, err)
			}
		}
		return nil
	}
	return last
}
