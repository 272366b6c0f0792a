package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// version is the plugin's vendor version.
const version = "0.1.0"

// plugin serves the identity, controller and node services.
type plugin struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	root, nodeID, name string
	mu                 sync.Mutex
}

func newPlugin(root, nodeID, name string) (*plugin, error) {
	if err := os.MkdirAll(filepath.Join(root, "volumes"), 0o755); err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	return &plugin{root: root, nodeID: nodeID, name: name}, nil
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// volumeID returns the id (and directory name) of volume name.
func volumeID(name string) string { return unsafe.ReplaceAllString(name, "_") }

func (p *plugin) dir(id string) (string, error) {
	if id == "" || id != volumeID(id) || id == "." || id == ".." {
		return "", status.Errorf(codes.InvalidArgument, "volume id %q is not one of this plugin's", id)
	}
	return filepath.Join(p.root, "volumes", id), nil
}

// GetPluginInfo implements csi.IdentityServer.
func (p *plugin) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: p.name, VendorVersion: version}, nil
}

// GetPluginCapabilities implements csi.IdentityServer.
func (p *plugin) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}},
	}}}, nil
}

// Probe implements csi.IdentityServer: ready once the root exists.
func (p *plugin) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	if _, err := os.Stat(filepath.Join(p.root, "volumes")); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "root: %v", err)
	}
	return &csi.ProbeResponse{}, nil
}

// ControllerGetCapabilities implements csi.ControllerServer.
func (p *plugin) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
	}}, nil
}

// CreateVolume implements csi.ControllerServer: a directory named for the
// volume; creating it again returns it.
func (p *plugin) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name is required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume capabilities are required")
	}
	for _, c := range req.GetVolumeCapabilities() {
		if c.GetBlock() != nil {
			return nil, status.Error(codes.InvalidArgument, "block volumes are not supported")
		}
	}
	id := volumeID(req.GetName())
	dir, err := p.dir(id)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Errorf(codes.Internal, "create %s: %v", dir, err)
	}
	_ = os.Chmod(dir, 0o777) // tasks of any user write to it
	capacity := req.GetCapacityRange().GetRequiredBytes()
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: capacity,
		VolumeContext: map[string]string{"path": dir}}}, nil
}

// DeleteVolume implements csi.ControllerServer; a missing volume is fine.
func (p *plugin) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	dir, err := p.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return nil, status.Errorf(codes.Internal, "delete %s: %v", dir, err)
	}
	return &csi.DeleteVolumeResponse{}, nil
}

// ValidateVolumeCapabilities implements csi.ControllerServer.
func (p *plugin) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	dir, err := p.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s: %v", req.GetVolumeId(), err)
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeCapabilities: req.GetVolumeCapabilities()}}, nil
}

// NodeGetInfo implements csi.NodeServer.
func (p *plugin) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: p.nodeID}, nil
}

// NodeGetCapabilities implements csi.NodeServer.
func (p *plugin) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}},
	}}}, nil
}

// NodeStageVolume implements csi.NodeServer: the staging path points at
// the volume's directory.
func (p *plugin) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	dir, err := p.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging target path is required")
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s: %v", req.GetVolumeId(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := attach(dir, req.GetStagingTargetPath(), false); err != nil {
		return nil, status.Errorf(codes.Internal, "stage: %v", err)
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume implements csi.NodeServer.
func (p *plugin) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging target path is required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := detach(req.GetStagingTargetPath()); err != nil {
		return nil, status.Errorf(codes.Internal, "unstage: %v", err)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume implements csi.NodeServer: the target path points at
// the volume (read-only publications are bind-mounted read-only as root;
// a symlink cannot enforce it).
func (p *plugin) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	dir, err := p.dir(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	if req.GetVolumeCapability().GetBlock() != nil {
		return nil, status.Error(codes.InvalidArgument, "block volumes are not supported")
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s: %v", req.GetVolumeId(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := attach(dir, req.GetTargetPath(), req.GetReadonly()); err != nil {
		return nil, status.Errorf(codes.Internal, "publish: %v", err)
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume implements csi.NodeServer.
func (p *plugin) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := detach(req.GetTargetPath()); err != nil {
		return nil, status.Errorf(codes.Internal, "unpublish: %v", err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// attach makes target show dir: a bind mount when mounting is allowed,
// else a symlink. Attaching what is already attached succeeds.
func attach(dir, target string, readOnly bool) error {
	if fi, err := os.Lstat(target); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			if dest, _ := os.Readlink(target); dest == dir {
				return nil
			}
			if err := os.Remove(target); err != nil {
				return err
			}
		} else if mounted(target) {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if err := bindMount(dir, target, readOnly); err == nil {
		return nil
	} else if !errors.Is(err, errNoMount) {
		return err
	}
	if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
		if err := os.Remove(target); err != nil { // an empty directory the CO made
			return err
		}
	}
	return os.Symlink(dir, target)
}

// detach undoes attach; a target that is not there is fine.
func detach(target string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return os.Remove(target)
	}
	if mounted(target) {
		if err := unmount(target); err != nil {
			return err
		}
	}
	return os.Remove(target)
}
