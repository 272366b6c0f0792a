package csi

import (
	"context"
	"errors"
	"fmt"
	api "github.com/ordoplane/ordo/commands/csi"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ordoplane/ordo/events"
)

// SocketName is the socket a plugin task serves in its mount_dir.
const SocketName = "csi.sock"

// ErrNoPlugin is returned for a call to a plugin this client does not run.
var ErrNoPlugin = errors.New("csi: plugin not running on this client")

// Manager holds the plugins this client's tasks serve and calls them.
type Manager struct {
	root    string
	log     *slog.Logger
	timeout time.Duration

	mu struct {
		sync.Mutex
		plugins map[string]*plugin // by plugin id
	}
}

// plugin is one registered plugin instance.
type plugin struct {
	id, typ, socket, allocID string
	conn                     *grpc.ClientConn
	// stage is whether the node service stages (STAGE_UNSTAGE_VOLUME),
	// learnt by Fingerprint.
	stage bool
}

// NewManager returns a Manager keeping its staging and publication
// directories under root (<data dir>/csi). timeout bounds each call
// (default 30s).
func NewManager(root string, log *slog.Logger, timeout time.Duration) (*Manager, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("csi: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	m := &Manager{root: root, log: log, timeout: timeout}
	m.mu.plugins = map[string]*plugin{}
	return m, nil
}

// Register records that allocation allocID runs plugin id of type typ
// (controller, node, monolith) on socket. The plugin may not serve yet:
// Fingerprint reports it unhealthy until it answers.
func (m *Manager) Register(id, typ, socket, allocID string) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("csi: plugin %s at %s: %w", id, socket, err)
	}
	m.mu.Lock()
	old := m.mu.plugins[id]
	m.mu.plugins[id] = &plugin{id: id, typ: typ, socket: socket, allocID: allocID, conn: conn}
	m.mu.Unlock()
	if old != nil {
		old.conn.Close()
	}
	m.log.Info("CSI plugin registered", "plugin_id", id, "type", typ, "socket", socket, "alloc_id", allocID)
	return nil
}

// Deregister forgets plugin id if allocation allocID still runs it.
func (m *Manager) Deregister(id, allocID string) {
	m.mu.Lock()
	p := m.mu.plugins[id]
	if p == nil || p.allocID != allocID {
		m.mu.Unlock()
		return
	}
	delete(m.mu.plugins, id)
	m.mu.Unlock()
	p.conn.Close()
	m.log.Info("CSI plugin deregistered", "plugin_id", id, "alloc_id", allocID)
}

// Close closes every plugin connection.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, p := range m.mu.plugins {
		p.conn.Close()
		delete(m.mu.plugins, id)
	}
}

func (m *Manager) get(id string) (*plugin, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.mu.plugins[id]
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, id)
	}
	return p, nil
}

func (p *plugin) controller() bool {
	return p.typ == events.CSIPluginTypeController || p.typ == events.CSIPluginTypeMonolith
}

func (p *plugin) node() bool {
	return p.typ == events.CSIPluginTypeNode || p.typ == events.CSIPluginTypeMonolith
}

// Fingerprint asks every registered plugin who it is and what it can do,
// and returns the node's controller and node instances by plugin id
// (capabilities sorted, N16); a plugin that does not answer is reported
// unhealthy with the reason.
func (m *Manager) Fingerprint(ctx context.Context) (controllers, nodes map[string]*events.CSIInfo) {
	m.mu.Lock()
	list := make([]*plugin, 0, len(m.mu.plugins))
	for _, p := range m.mu.plugins {
		list = append(list, p)
	}
	m.mu.Unlock()
	for _, p := range list {
		c, n := m.fingerprint(ctx, p)
		if c != nil {
			if controllers == nil {
				controllers = map[string]*events.CSIInfo{}
			}
			controllers[p.id] = c
		}
		if n != nil {
			if nodes == nil {
				nodes = map[string]*events.CSIInfo{}
			}
			nodes[p.id] = n
		}
	}
	return controllers, nodes
}

func (m *Manager) fingerprint(ctx context.Context, p *plugin) (controller, node *events.CSIInfo) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	base := events.CSIInfo{PluginID: p.id, AllocID: p.allocID}
	fail := func(err error) (*events.CSIInfo, *events.CSIInfo) {
		base.HealthDescription = err.Error()
		var c, n *events.CSIInfo
		if p.controller() {
			cc := base
			c = &cc
		}
		if p.node() {
			nn := base
			n = &nn
		}
		return c, n
	}
	id := csipb.NewIdentityClient(p.conn)
	if _, err := id.Probe(ctx, &csipb.ProbeRequest{}); err != nil {
		return fail(fmt.Errorf("probe: %w", err))
	}
	info, err := id.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
	if err != nil {
		return fail(fmt.Errorf("plugin info: %w", err))
	}
	caps, err := id.GetPluginCapabilities(ctx, &csipb.GetPluginCapabilitiesRequest{})
	if err != nil {
		return fail(fmt.Errorf("plugin capabilities: %w", err))
	}
	base.Provider, base.ProviderVersion, base.Healthy, base.HealthDescription = info.GetName(), info.GetVendorVersion(), true, "healthy"
	for _, c := range caps.GetCapabilities() {
		switch c.GetService().GetType() {
		case csipb.PluginCapability_Service_CONTROLLER_SERVICE:
			base.RequiresControllerPlugin = true
		case csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS:
			base.RequiresTopologies = true
		}
	}
	if p.controller() {
		cc := base
		resp, err := csipb.NewControllerClient(p.conn).ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
		if err != nil {
			cc.Healthy, cc.HealthDescription = false, "controller capabilities: "+err.Error()
		}
		ci := &events.CSIControllerInfo{}
		for _, c := range resp.GetCapabilities() {
			ci.Capabilities = append(ci.Capabilities, c.GetRpc().GetType().String())
		}
		slices.Sort(ci.Capabilities)
		cc.ControllerInfo = ci
		controller = &cc
	}
	if p.node() {
		nn := base
		nc := csipb.NewNodeClient(p.conn)
		ni, err := nc.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
		if err != nil {
			nn.Healthy, nn.HealthDescription = false, "node info: "+err.Error()
		}
		ncaps, err := nc.NodeGetCapabilities(ctx, &csipb.NodeGetCapabilitiesRequest{})
		if err != nil {
			nn.Healthy, nn.HealthDescription = false, "node capabilities: "+err.Error()
		}
		info := &events.CSINodeInfo{ID: ni.GetNodeId(), MaxVolumes: ni.GetMaxVolumesPerNode()}
		if segs := ni.GetAccessibleTopology().GetSegments(); len(segs) > 0 {
			info.AccessibleTopology = &events.CSITopology{Segments: segs}
		}
		stage := false
		for _, c := range ncaps.GetCapabilities() {
			t := c.GetRpc().GetType()
			info.Capabilities = append(info.Capabilities, t.String())
			stage = stage || t == csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME
		}
		slices.Sort(info.Capabilities)
		nn.NodeInfo = info
		node = &nn
		m.mu.Lock()
		p.stage = stage
		m.mu.Unlock()
	}
	return controller, node
}

// capability is the CSI volume capability of a request's modes.
func capability(access, attachment string) *csipb.VolumeCapability {
	mode := map[string]csipb.VolumeCapability_AccessMode_Mode{
		events.CSIAccessSingleNodeReader: csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		events.CSIAccessSingleNodeWriter: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		events.CSIAccessMultiNodeReader:  csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY,
		events.CSIAccessMultiNodeSingleW: csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER,
		events.CSIAccessMultiNodeMultiW:  csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER,
	}[access]
	c := &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode}}
	if attachment == events.CSIAttachmentBlockDevice {
		c.AccessType = &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}
	} else {
		c.AccessType = &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}}
	}
	return c
}

// StagingPath is where volume (ns, id) of plugin is staged on this node.
func (m *Manager) StagingPath(pluginID, ns, id string) string {
	return filepath.Join(m.root, "staging", pluginID, ns, id)
}

// PublishPath is where allocation alloc's publication of volume (ns, id)
// is: derived from the claim alone, so unpublish needs nothing else.
func (m *Manager) PublishPath(alloc, ns, id string) string {
	return filepath.Join(m.root, "per-alloc", alloc, ns, id)
}

// Publish stages (when the plugin stages) and publishes the volume of req
// for req.AllocID and returns the publication's path.
func (m *Manager) Publish(ctx context.Context, req api.VolumeRequest) (string, error) {
	p, err := m.get(req.PluginID)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	nc := csipb.NewNodeClient(p.conn)
	vc := capability(req.AccessMode, req.AttachmentMode)
	staging := ""
	m.mu.Lock()
	stage := p.stage
	m.mu.Unlock()
	if stage {
		staging = m.StagingPath(req.PluginID, req.Namespace, req.VolumeID)
		if err := os.MkdirAll(filepath.Dir(staging), 0o755); err != nil {
			return "", err
		}
		if _, err := nc.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: req.ExternalID, StagingTargetPath: staging,
			VolumeCapability: vc, Secrets: req.Secrets, VolumeContext: req.Context}); err != nil {
			return "", fmt.Errorf("csi: stage volume %s: %w", req.VolumeID, err)
		}
	}
	target := m.PublishPath(req.AllocID, req.Namespace, req.VolumeID)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", err
	}
	if _, err := nc.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: req.ExternalID, StagingTargetPath: staging,
		TargetPath: target, VolumeCapability: vc, Readonly: req.ReadOnly, Secrets: req.Secrets, VolumeContext: req.Context}); err != nil {
		return "", fmt.Errorf("csi: publish volume %s: %w", req.VolumeID, err)
	}
	m.log.Info("CSI volume published", "volume", req.VolumeID, "namespace", req.Namespace, "alloc_id", req.AllocID, "path", target)
	return target, nil
}

// Unpublish unpublishes req's publication and, when no other allocation
// on this node still publishes the volume, unstages it. Idempotent.
func (m *Manager) Unpublish(ctx context.Context, req api.VolumeRequest) error {
	p, err := m.get(req.PluginID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	nc := csipb.NewNodeClient(p.conn)
	target := m.PublishPath(req.AllocID, req.Namespace, req.VolumeID)
	if _, err := nc.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: req.ExternalID, TargetPath: target}); err != nil {
		return fmt.Errorf("csi: unpublish volume %s: %w", req.VolumeID, err)
	}
	_ = os.RemoveAll(filepath.Join(m.root, "per-alloc", req.AllocID))
	m.mu.Lock()
	stage := p.stage
	m.mu.Unlock()
	if stage && !m.publishedElsewhere(req) {
		if _, err := nc.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: req.ExternalID,
			StagingTargetPath: m.StagingPath(req.PluginID, req.Namespace, req.VolumeID)}); err != nil {
			return fmt.Errorf("csi: unstage volume %s: %w", req.VolumeID, err)
		}
	}
	m.log.Info("CSI volume unpublished", "volume", req.VolumeID, "namespace", req.Namespace, "alloc_id", req.AllocID)
	return nil
}

// publishedElsewhere reports whether another allocation on this node
// still has the volume published.
func (m *Manager) publishedElsewhere(req api.VolumeRequest) bool {
	allocs, _ := os.ReadDir(filepath.Join(m.root, "per-alloc"))
	for _, a := range allocs {
		if a.Name() == req.AllocID {
			continue
		}
		if _, err := os.Lstat(m.PublishPath(a.Name(), req.Namespace, req.VolumeID)); err == nil {
			return true
		}
	}
	return false
}

// ControllerUnpublish unpublishes req's volume from node req.NodeID
// through this client's controller of the plugin.
func (m *Manager) ControllerUnpublish(ctx context.Context, req api.VolumeRequest) error {
	p, err := m.get(req.PluginID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	_, err = csipb.NewControllerClient(p.conn).ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{
		VolumeId: req.ExternalID, NodeId: req.NodeID, Secrets: req.Secrets})
	if err != nil {
		return fmt.Errorf("csi: controller unpublish volume %s: %w", req.VolumeID, err)
	}
	return nil
}

// Create creates a volume through this client's controller of the plugin.
func (m *Manager) Create(ctx context.Context, req api.CreateRequest) (api.CreateResponse, error) {
	p, err := m.get(req.PluginID)
	if err != nil {
		return api.CreateResponse{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	cr := &csipb.CreateVolumeRequest{Name: req.Name, Parameters: req.Parameters, Secrets: req.Secrets}
	for _, c := range req.Capabilities {
		cr.VolumeCapabilities = append(cr.VolumeCapabilities, capability(c.AccessMode, c.AttachmentMode))
	}
	if req.CapacityMin > 0 || req.CapacityMax > 0 {
		cr.CapacityRange = &csipb.CapacityRange{RequiredBytes: req.CapacityMin, LimitBytes: req.CapacityMax}
	}
	if t := req.Topologies; t != nil {
		cr.AccessibilityRequirements = &csipb.TopologyRequirement{}
		for _, x := range t.Required {
			cr.AccessibilityRequirements.Requisite = append(cr.AccessibilityRequirements.Requisite, &csipb.Topology{Segments: x.Segments})
		}
		for _, x := range t.Preferred {
			cr.AccessibilityRequirements.Preferred = append(cr.AccessibilityRequirements.Preferred, &csipb.Topology{Segments: x.Segments})
		}
	}
	resp, err := csipb.NewControllerClient(p.conn).CreateVolume(ctx, cr)
	if err != nil {
		return api.CreateResponse{}, fmt.Errorf("csi: create volume %s: %w", req.Name, err)
	}
	v := resp.GetVolume()
	out := api.CreateResponse{ExternalID: v.GetVolumeId(), Capacity: v.GetCapacityBytes(), Context: v.GetVolumeContext()}
	for _, t := range v.GetAccessibleTopology() {
		out.Topologies = append(out.Topologies, events.CSITopology{Segments: t.GetSegments()})
	}
	return out, nil
}

// Delete deletes a volume through this client's controller of the plugin
// (CSI makes deleting a missing volume a success).
func (m *Manager) Delete(ctx context.Context, req api.VolumeRequest) error {
	p, err := m.get(req.PluginID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	if _, err := csipb.NewControllerClient(p.conn).DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: req.ExternalID, Secrets: req.Secrets}); err != nil {
		return fmt.Errorf("csi: delete volume %s: %w", req.VolumeID, err)
	}
	return nil
}
