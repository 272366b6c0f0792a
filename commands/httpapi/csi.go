package httpapi

import (
	"cmp"
	"errors"
	"io"
	"net/http"
	"slices"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	pc "github.com/ordoplane/ordo/projections/csi"
)

// CSI volumes and plugins (Nomad's /v1/volumes, /v1/volume/csi/:id,
// /v1/plugins, /v1/plugin/csi/:id). Volume ids are exact everywhere but
// in lists' prefix (N19); secrets are never shown (redacted on read);
// allocations are listed newest modify index first
// with full ids (N16).

var (
	volumeTables = []string{pc.VolumesTable, pc.PluginsTable, allocs.Table}
	pluginTables = []string{pc.PluginsTable, allocs.Table}
)

func (s *Server) csiRoutes() {
	s.handle("GET /v1/volumes", s.leader(endpoint(s.listVolumes)))
	s.handle("GET /v1/volume/csi/{id}", s.leader(endpoint(s.getVolume)))
	s.handle("PUT /v1/volume/csi/{id}", s.leader(endpoint(s.registerVolume)))
	s.handle("POST /v1/volume/csi/{id}", s.leader(endpoint(s.registerVolume)))
	s.handle("DELETE /v1/volume/csi/{id}", s.leader(endpoint(s.deregisterVolume)))
	s.handle("PUT /v1/volume/csi/{id}/create", s.leader(endpoint(s.createVolume))) // csicreate.go
	s.handle("POST /v1/volume/csi/{id}/create", s.leader(endpoint(s.createVolume)))
	s.handle("DELETE /v1/volume/csi/{id}/delete", s.leader(endpoint(s.deleteVolume))) // csicreate.go
	s.handle("PUT /v1/volume/csi/{id}/detach", s.leader(endpoint(s.detachVolume)))
	s.handle("POST /v1/volume/csi/{id}/detach", s.leader(endpoint(s.detachVolume)))
	s.handle("DELETE /v1/volume/csi/{id}/detach", s.leader(endpoint(s.detachVolume)))
	s.handle("GET /v1/plugins", s.leader(endpoint(s.listPlugins)))
	s.handle("GET /v1/plugin/csi/{id}", s.leader(endpoint(s.getPlugin)))
}

// redacted replaces every secret value.
const redacted = "[REDACTED]"

// volumeJSON is Nomad's api.CSIVolume.
type volumeJSON struct {
	events.CSIVolume
	Secrets             map[string]string
	AccessMode          string
	AttachmentMode      string
	ReadAllocs          map[string]*allocs.Stub
	WriteAllocs         map[string]*allocs.Stub
	ReadClaims          map[string]events.CSIVolumeClaim
	WriteClaims         map[string]events.CSIVolumeClaim
	PastClaims          map[string]events.CSIVolumeClaim
	Allocations         []*allocs.Stub
	Schedulable         bool
	Provider            string
	ProviderVersion     string
	ControllerRequired  bool
	ControllersHealthy  int
	ControllersExpected int
	NodesHealthy        int
	NodesExpected       int
	ResourceExhausted   int64
	CreateIndex         uint64
	ModifyIndex         uint64
}

// pluginJSON is Nomad's api.CSIPlugin.
type pluginJSON struct {
	*pc.Plugin
	Allocations []*allocs.Stub
}

// newestFirst sorts allocation stubs by modify index, newest first, then
// id (N16).
func newestFirst(list []*allocs.Stub) {
	slices.SortFunc(list, func(a, b *allocs.Stub) int {
		if c := cmp.Compare(b.ModifyIndex, a.ModifyIndex); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

func pluginOf(v projections.View, id string) (*pc.Plugin, error) {
	p, err := pc.GetPlugin(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

func fillHealth(p *pc.Plugin, schedulable *bool, provider, version *string, required *bool, ch, ce, nh, ne *int) {
	if p == nil {
		return
	}
	*schedulable = p.NodesHealthy > 0 && (!p.ControllerRequired || p.ControllersHealthy > 0)
	*provider, *version, *required = p.Provider, p.Version, p.ControllerRequired
	*ch, *ce, *nh, *ne = p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected
}

func volumeShape(v projections.View, vol *pc.Volume) (*volumeJSON, error) {
	out := &volumeJSON{CSIVolume: vol.CSIVolume, ReadAllocs: map[string]*allocs.Stub{}, WriteAllocs: map[string]*allocs.Stub{},
		ReadClaims: map[string]events.CSIVolumeClaim{}, WriteClaims: map[string]events.CSIVolumeClaim{},
		PastClaims: map[string]events.CSIVolumeClaim{}, Allocations: []*allocs.Stub{},
		CreateIndex: vol.CreateIndex, ModifyIndex: vol.ModifyIndex}
	if len(vol.Secrets) > 0 {
		out.Secrets = map[string]string{}
		for k := range vol.Secrets {
			out.Secrets[k] = redacted
		}
	}
	if len(vol.RequestedCapabilities) == 1 {
		out.AccessMode, out.AttachmentMode = vol.RequestedCapabilities[0].AccessMode, vol.RequestedCapabilities[0].AttachmentMode
	}
	for _, c := range vol.Claims {
		var stub *allocs.Stub
		if a, err := allocs.Get(v, c.AllocID); err == nil {
			stub = a.Stub()
			out.Allocations = append(out.Allocations, stub)
		} else if !errors.Is(err, projections.ErrNotFound) {
			return nil, err
		}
		if c.Mode == events.CSIClaimWrite {
			out.WriteAllocs[c.AllocID], out.WriteClaims[c.AllocID] = stub, c
		} else {
			out.ReadAllocs[c.AllocID], out.ReadClaims[c.AllocID] = stub, c
		}
		if !pc.Live(&c) {
			out.PastClaims[c.AllocID] = c
		}
	}
	newestFirst(out.Allocations)
	p, err := pluginOf(v, vol.PluginID)
	if err != nil {
		return nil, err
	}
	fillHealth(p, &out.Schedulable, &out.Provider, &out.ProviderVersion, &out.ControllerRequired,
		&out.ControllersHealthy, &out.ControllersExpected, &out.NodesHealthy, &out.NodesExpected)
	return out, nil
}

func volumeStubOf(v projections.View, vol *pc.Volume) (*api.CSIVolumeListStub, error) {
	st := &api.CSIVolumeListStub{ID: vol.ID, Namespace: vol.Namespace, Name: vol.Name, ExternalID: vol.ExternalID,
		Topologies: vol.Topologies, PluginID: vol.PluginID, CreateIndex: vol.CreateIndex, ModifyIndex: vol.ModifyIndex,
		CurrentReaders: vol.Count(events.CSIClaimRead), CurrentWriters: vol.Count(events.CSIClaimWrite)}
	if len(vol.RequestedCapabilities) == 1 {
		st.AccessMode, st.AttachmentMode = vol.RequestedCapabilities[0].AccessMode, vol.RequestedCapabilities[0].AttachmentMode
	}
	p, err := pluginOf(v, vol.PluginID)
	if err != nil {
		return nil, err
	}
	var version string
	fillHealth(p, &st.Schedulable, &st.Provider, &version, &st.ControllerRequired,
		&st.ControllersHealthy, &st.ControllersExpected, &st.NodesHealthy, &st.NodesExpected)
	return st, nil
}

// csiType refuses a type parameter other than csi (absent means csi).
func csiType(r *http.Request) error {
	if t := r.URL.Query().Get("type"); t != "" && t != events.VolumeTypeCSI {
		return commands.Invalid("type", "%q is not supported (csi)", t)
	}
	return nil
}

// listVolumes answers volume stubs by namespace then id; namespace "*"
// and prefix apply together (N19); plugin_id keeps one plugin's.
func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request) error {
	if err := csiType(r); err != nil {
		return err
	}
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = "default"
	} else if ns != pc.AllNamespaces {
		if err := namespace.ValidName("namespace", ns); err != nil {
			return err
		}
	}
	q := pc.VolumeQuery{Namespace: ns, Prefix: r.URL.Query().Get("prefix"), PluginID: r.URL.Query().Get("plugin_id")}
	return queryList(s, w, r, volumeTables, func(v projections.View) ([]*api.CSIVolumeListStub, error) {
		var out []*api.CSIVolumeListStub
		err := pc.ScanVolumes(v, q, func(vol *pc.Volume) error {
			if s.authorizeNamespace(r, vol.Namespace, policy.CapCSIListVolume) != nil {
				return nil
			}
			st, err := volumeStubOf(v, vol)
			if err == nil {
				out = append(out, st)
			}
			return err
		})
		return out, err
	})
}

// volumeTarget returns the namespace and exact volume id of a request.
func volumeTarget(r *http.Request) (ns, id string, err error) {
	ns = queryNamespace(r)
	if err := namespace.ValidName("namespace", ns); err != nil {
		return "", "", err
	}
	id = r.PathValue("id")
	return ns, id, csi.ValidID("id", id)
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := volumeTarget(r)
	if err != nil {
		return err
	}
	s.query(w, r, volumeTables, func(v projections.View) (any, error) {
		vol, err := pc.GetVolume(v, ns, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "volume", ID: id}
		} else if err != nil {
			return nil, err
		}
		return volumeShape(v, vol)
	})
	return nil
}

// volumeBody reads a register or create body — Nomad's {"Volumes":
// [volume]} or a bare volume — whose ID must be the path's; its namespace
// defaults to the request's, and the caller must be allowed to write
// volumes there.
func (s *Server) volumeBody(r *http.Request) (*csi.Spec, error) {
	ns, _, err := volumeTarget(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.BodyLimit+1))
	if err != nil {
		return nil, commands.Invalid("body", "%v", err)
	}
	if int64(len(body)) > s.cfg.BodyLimit {
		return nil, &commands.TooLargeError{Limit: s.cfg.BodyLimit}
	}
	spec, err := csi.DecodeRegister(body)
	if err != nil {
		return nil, err
	}
	if err := pathValue(r, "id", "ID", &spec.Volume.ID); err != nil {
		return nil, err
	}
	if spec.Volume.Namespace == "" {
		spec.Volume.Namespace = ns
	}
	if err := s.authorizeNamespace(r, spec.Volume.Namespace, policy.CapCSIWriteVolume); err != nil {
		return nil, err
	}
	return spec, nil
}

// registerVolume registers (or merges onto, N18) the volume in the body.
func (s *Server) registerVolume(w http.ResponseWriter, r *http.Request) error {
	spec, err := s.volumeBody(r)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "volume.register", request(r), csi.Register{Volume: spec.Volume, Secrets: spec.Secrets})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) deregisterVolume(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := volumeTarget(r)
	if err != nil {
		return err
	}
	force, err := queryBool(r, "force")
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "volume.deregister", request(r), csi.Deregister{Namespace: ns, ID: id, Force: force})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) detachVolume(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := volumeTarget(r)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "volume.detach", request(r),
		csi.Detach{Namespace: ns, ID: id, NodeID: r.URL.Query().Get("node")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// listPlugins answers plugin stubs whose id starts with prefix (N19).
func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) error {
	if err := csiType(r); err != nil {
		return err
	}
	prefix := r.URL.Query().Get("prefix")
	return queryList(s, w, r, pluginTables, func(v projections.View) ([]*api.CSIPluginListStub, error) {
		var out []*api.CSIPluginListStub
		err := pc.ScanPlugins(v, prefix, func(p *pc.Plugin) error {
			out = append(out, &api.CSIPluginListStub{ID: p.ID, Provider: p.Provider, ControllerRequired: p.ControllerRequired,
				ControllersHealthy: p.ControllersHealthy, ControllersExpected: p.ControllersExpected,
				NodesHealthy: p.NodesHealthy, NodesExpected: p.NodesExpected, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
			return nil
		})
		return out, err
	})
}

// getPlugin answers the plugin with the exact id, its allocations newest
// modify index first (N16).
func (s *Server) getPlugin(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := csi.ValidID("id", id); err != nil {
		return err
	}
	s.query(w, r, pluginTables, func(v projections.View) (any, error) {
		p, err := pc.GetPlugin(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "plugin", ID: id}
		} else if err != nil {
			return nil, err
		}
		out := &pluginJSON{Plugin: p, Allocations: []*allocs.Stub{}}
		for _, aid := range p.AllocIDs {
			if a, err := allocs.Get(v, aid); err == nil {
				out.Allocations = append(out.Allocations, a.Stub())
			} else if !errors.Is(err, projections.ErrNotFound) {
				return nil, err
			}
		}
		newestFirst(out.Allocations)
		return out, nil
	})
	return nil
}
