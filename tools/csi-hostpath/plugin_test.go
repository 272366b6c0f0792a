package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// TestPluginOverGRPC builds the plugin, runs it as a process and drives
// a volume through the real CSI API: create (twice: idempotent), stage,
// publish, a file written through the publication lands in the volume,
// unpublish, unstage (twice), delete.
func TestPluginOverGRPC(t *testing.T) {
	dir := t.TempDir()
	bin := localtest.BuildPackageT(t, "github.com/ordoplane/ordo/tools/csi-hostpath")
	sock := filepath.Join(dir, "csi.sock")
	root := filepath.Join(dir, "root")
	cmd := exec.Command(bin, "-endpoint", "unix://"+sock, "-root", root, "-node-id", "node-1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id := csi.NewIdentityClient(conn)
	if !waittest.Poll(20*time.Second, func() bool {
		_, err = id.Probe(ctx, &csi.ProbeRequest{})
		return err == nil
	}) {
		t.Fatalf("plugin never ready: %v", err)
	}
	info, err := id.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil || info.GetName() != "hostpath.ordo" {
		t.Fatalf("info %v %v", info, err)
	}
	ctrl, node := csi.NewControllerClient(conn), csi.NewNodeClient(conn)
	mount := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	var volID string
	for range 2 {
		v, err := ctrl.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "db[0]", VolumeCapabilities: []*csi.VolumeCapability{mount}})
		if err != nil {
			t.Fatal(err)
		}
		volID = v.GetVolume().GetVolumeId()
	}
	if volID != "db_0_" {
		t.Fatalf("volume id %q", volID)
	}
	staging, target := filepath.Join(dir, "staging", volID), filepath.Join(dir, "alloc", "data")
	if _, err := node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: staging, VolumeCapability: mount}); err != nil {
		t.Fatal(err)
	}
	if _, err := node.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: volID, StagingTargetPath: staging,
		TargetPath: target, VolumeCapability: mount}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "hello"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "volumes", volID, "hello")); err != nil || string(b) != "hi" {
		t.Fatalf("file in the volume: %q %v", b, err)
	}
	if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: staging}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("target still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "volumes", volID, "hello")); err != nil {
		t.Fatalf("unpublish lost the data: %v", err)
	}
	if _, err := ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: volID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "volumes", volID)); !os.IsNotExist(err) {
		t.Fatalf("volume still there: %v", err)
	}
}
