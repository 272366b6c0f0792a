package csi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/csi"
	api "github.com/ordoplane/ordo/commands/csi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// TestManagerWithHostpath runs tools/csi-hostpath as a process and drives
// it through the Manager: unhealthy until it serves, then fingerprinted
// (capabilities sorted), create, publish (staged), a file lands in the
// volume, unpublish (unstaged), a second unpublish is harmless, delete.
func TestManagerWithHostpath(t *testing.T) {
	dir := t.TempDir()
	bin := localtest.BuildPackageT(t, "github.com/ordoplane/ordo/tools/csi-hostpath")
	m, err := csi.NewManager(filepath.Join(dir, "csi"), nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sock := filepath.Join(dir, "task", "csi", "csi.sock")
	if err := m.Register("hostpath", events.CSIPluginTypeMonolith, sock, "alloc-plugin"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, n := m.Fingerprint(ctx)
	if c["hostpath"] == nil || c["hostpath"].Healthy || n["hostpath"] == nil || n["hostpath"].HealthDescription == "" {
		t.Fatalf("before the plugin serves: %+v %+v", c["hostpath"], n["hostpath"])
	}
	root := filepath.Join(dir, "root")
	cmd := exec.Command(bin, "-root", root, "-node-id", "n1")
	cmd.Env = append(os.Environ(), "CSI_ENDPOINT=unix://"+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !waittest.Poll(20*time.Second, func() bool {
		c, n = m.Fingerprint(ctx)
		return c["hostpath"].Healthy && n["hostpath"].Healthy
	}) {
		t.Fatalf("plugin never healthy: %+v", c["hostpath"])
	}
	if got := n["hostpath"].NodeInfo; got.ID != "n1" || len(got.Capabilities) != 1 || got.Capabilities[0] != "STAGE_UNSTAGE_VOLUME" {
		t.Fatalf("node info %+v", got)
	}
	if c["hostpath"].Provider != "hostpath.ordo" || !c["hostpath"].ControllerInfo.Has("CREATE_DELETE_VOLUME") {
		t.Fatalf("controller %+v", c["hostpath"])
	}
	created, err := m.Create(ctx, api.CreateRequest{PluginID: "hostpath", Name: "db",
		Capabilities: []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}}})
	if err != nil || created.ExternalID != "db" {
		t.Fatalf("create %+v %v", created, err)
	}
	req := api.VolumeRequest{PluginID: "hostpath", Namespace: "default", VolumeID: "db", ExternalID: created.ExternalID,
		AllocID: "a1", AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}
	path, err := m.Publish(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if path != m.PublishPath("a1", "default", "db") {
		t.Fatalf("published at %s", path)
	}
	if err := os.WriteFile(filepath.Join(path, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "volumes", "db", "f")); err != nil {
		t.Fatalf("file not in the volume: %v", err)
	}
	for range 2 {
		if err := m.Unpublish(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(m.StagingPath("hostpath", "default", "db")); !os.IsNotExist(err) {
		t.Fatalf("still staged: %v", err)
	}
	if err := m.Delete(ctx, req); err != nil {
		t.Fatal(err)
	}
	m.Deregister("hostpath", "someone-else") // not its allocation: kept
	if _, err := m.Publish(ctx, req); err == nil || err.Error() == "" {
		t.Fatal("publish of a deleted volume succeeded")
	}
	m.Deregister("hostpath", "alloc-plugin")
	if c, n := m.Fingerprint(ctx); c != nil || n != nil {
		t.Fatalf("after deregister: %v %v", c, n)
	}
}
