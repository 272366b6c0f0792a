package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/projections"
	pc "github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// createTimeout bounds a create through a plugin's controller.
const createTimeout = 2 * time.Minute

// errNoController answers a create whose plugin has no reachable
// controller that creates volumes.
type errNoController struct{ plugin string }

func (e *errNoController) Error() string {
	return fmt.Sprintf("CSI plugin %q has no healthy controller that creates volumes (CREATE_DELETE_VOLUME)", e.plugin)
}

// createVolume creates the body's volume through a controller of its
// plugin — on a client that runs one, over the client API — and
// registers it with what the plugin answered (Nomad's volume create).
// Creating a volume that exists is the plugin's idempotent create and a
// merging register (N18).
func (s *Server) createVolume(w http.ResponseWriter, r *http.Request) {
	ns, _, err := volumeTarget(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.BodyLimit+1))
	if err != nil || int64(len(body)) > s.cfg.BodyLimit {
		writeError(w, &commands.TooLargeError{Limit: s.cfg.BodyLimit})
		return
	}
	spec, err := csi.DecodeRegister(body)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := pathValue(r, "id", "ID", &spec.Volume.ID); err != nil {
		writeError(w, err)
		return
	}
	if spec.Volume.Namespace == "" {
		spec.Volume.Namespace = ns
	}
	if err := s.authorizeNamespace(r, spec.Volume.Namespace, policy.CapCSIWriteVolume); err != nil {
		writeError(w, err)
		return
	}
	if err := csi.ValidateVolume(&spec.Volume, spec.Secrets); err != nil {
		writeError(w, err)
		return
	}
	addrs, err := s.controllerAddrs(spec.Volume.PluginID)
	if err != nil {
		writeError(w, err)
		return
	}
	req := csi.CreateRequest{PluginID: spec.Volume.PluginID, Name: spec.Volume.ID, Capabilities: spec.Volume.RequestedCapabilities,
		CapacityMin: spec.Volume.RequestedCapacityMin, CapacityMax: spec.Volume.RequestedCapacityMax,
		Parameters: spec.Volume.Parameters, Secrets: spec.Secrets, Topologies: spec.Volume.RequestedTopologies}
	created, err := createThrough(r.Context(), addrs, req)
	if err != nil {
		writeJSON(w, http.StatusBadGateway, errorBody{Error: err.Error(), Status: http.StatusBadGateway})
		return
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
		writeError(w, err)
		return
	}
	writeResult(w, out)
}

// controllerAddrs returns the client API addresses of the nodes running a
// healthy controller of plugin id that creates volumes, by node id.
func (s *Server) controllerAddrs(id string) ([]string, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	p, err := pc.GetPlugin(v, id)
	if err != nil {
		return nil, commands.Invalid("PluginID", "no CSI plugin %q is registered", id)
	}
	ids := make([]string, 0, len(p.Controllers))
	for nid, in := range p.Controllers {
		if in.Healthy && in.ControllerInfo.Has("CREATE_DELETE_VOLUME") {
			ids = append(ids, nid)
		}
	}
	slices.Sort(ids)
	var addrs []string
	for _, nid := range ids {
		if n, err := nodes.Get(v, nid); err == nil && n.HTTPAddr != "" {
			addrs = append(addrs, n.HTTPAddr)
		}
	}
	if len(addrs) == 0 {
		return nil, &commands.ConflictError{Reason: (&errNoController{plugin: id}).Error()}
	}
	return addrs, nil
}

// createThrough asks each controller in turn until one creates the volume.
func createThrough(ctx context.Context, addrs []string, req csi.CreateRequest) (csi.CreateResponse, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return csi.CreateResponse{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	var last error
	for _, addr := range addrs {
		u := url.URL{Scheme: "http", Host: addr, Path: csi.PathControllerCreate}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
		if err != nil {
			return csi.CreateResponse{}, err
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
		var out csi.CreateResponse
		if err := json.Unmarshal(data, &out); err != nil {
			return out, fmt.Errorf("controller at %s: %w", addr, err)
		}
		if out.ExternalID == "" {
			last = fmt.Errorf("controller at %s answered no volume id", addr)
			continue
		}
		return out, nil
	}
	return csi.CreateResponse{}, fmt.Errorf("create volume %q: %w", req.Name, last)
}
