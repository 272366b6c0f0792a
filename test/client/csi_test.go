// This file tests CSI volumes end to end: a real agent with the client
// role, tools/csi-hostpath run as a plugin job by the exec driver, real
// gRPC between the client and the plugin, real files on the volume.

package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/test/testagent"
)

// csiTimeout bounds each wait on the agent: a failure guard, not a pace.
const csiTimeout = 60 * time.Second

type env struct {
	t    *testing.T
	base string
	data string
}

func (e *env) do(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.base+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (e *env) must(method, path string, body any) []byte {
	e.t.Helper()
	code, b := e.do(method, path, body)
	if code != 200 {
		e.t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	return b
}

func (e *env) get(path string, out any) bool {
	code, b := e.do("GET", path, nil)
	return code == 200 && json.Unmarshal(b, out) == nil
}

func task(name string, res int, cmd string, args ...string) events.Task {
	return events.Task{Name: name, Driver: "exec", Config: events.TaskConfig{"command": cmd, "args": toAny(args)},
		Resources: &events.Resources{CPU: 50, MemoryMB: res}, KillTimeout: 5 * time.Second}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func batch(id string, t events.Task) map[string]any {
	t.VolumeMounts = []events.VolumeMount{{Volume: "data", Destination: "/data"}}
	return map[string]any{"Job": events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeBatch, Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 1,
			RestartPolicy:    &events.RestartPolicy{Attempts: 0, Interval: time.Minute, Delay: time.Second, Mode: "fail"},
			ReschedulePolicy: &events.ReschedulePolicy{Attempts: 0, Interval: time.Minute, Delay: 5 * time.Second, DelayFunction: "constant"},
			Volumes: map[string]*events.VolumeRequest{"data": {Name: "data", Type: events.VolumeTypeCSI, Source: "shared",
				AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}},
			Tasks: []events.Task{t}}}}}
}

type allocStub struct{ ID, ClientStatus string }

func (e *env) allocs(job string) []allocStub {
	var out []allocStub
	e.get("/v1/job/"+job+"/allocations", &out)
	return out
}

func (e *env) waitComplete(job string) allocStub {
	e.t.Helper()
	var done allocStub
	testagent.WaitFor(e.t, csiTimeout, job+"'s allocation complete", func() bool {
		for _, a := range e.allocs(job) {
			if a.ClientStatus == events.AllocClientFailed {
				e.t.Fatalf("%s failed: %s", job, e.logs(a.ID))
			}
			if a.ClientStatus == events.AllocClientComplete {
				done = a
				return true
			}
		}
		return false
	})
	return done
}

func (e *env) logs(alloc string) string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(e.data, "alloc", alloc, "alloc", "logs", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out = append(out, filepath.Base(f)+": "+string(b))
	}
	return strings.Join(out, "\n")
}

// TestVolumeLifecycle: a plugin job runs tools/csi-hostpath on the client;
// its plugin turns healthy; a volume is created through its controller;
// a job writes a file on the volume; once it stops its claim is released
// (client unpublish, the volume watcher's node detach, free); a second
// job then claims the volume and reads the file; the volume is deleted
// through the controller.
func TestVolumeLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := localtest.BuildPackageT(t, "github.com/ordoplane/ordo/tools/csi-hostpath")
	cfg := agent.DevConfig()
	cfg.Client = agent.DevClientConfig()
	cfg.Client.NodeName = "n1"
	cfg.Client.HTTPAddr = "127.0.0.1:0"
	cfg.Client.CSIFingerprintInterval = 100 * time.Millisecond
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = testagent.Discard()
	cfg.RaftLogOutput = io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	e := &env{t: t, base: "http://" + a.HTTPAddr(), data: cfg.DataDir}
	testagent.WaitFor(t, csiTimeout, "the client's node ready", func() bool {
		var nodes []struct{ Status string }
		return e.get("/v1/nodes", &nodes) && len(nodes) == 1 && nodes[0].Status == events.NodeStatusReady
	})

	root := filepath.Join(dir, "volumes")
	plugin := task("plugin", 64, bin, "-root", root, "-node-id", "n1")
	plugin.CSIPluginConfig = &events.TaskCSIPluginConfig{ID: "hostpath", Type: events.CSIPluginTypeMonolith, MountDir: "csi"}
	e.must("PUT", "/v1/jobs", map[string]any{"Job": events.Job{ID: "csi-hostpath", Name: "csi-hostpath", Namespace: "default",
		Type: events.JobTypeService, Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []events.TaskGroup{{Name: "plugin", Count: 1, Tasks: []events.Task{plugin}}}}})
	testagent.WaitFor(t, csiTimeout, "the hostpath plugin healthy", func() bool {
		var p struct{ ControllersHealthy, NodesHealthy, NodesExpected int }
		return e.get("/v1/plugin/csi/hostpath", &p) && p.ControllersHealthy == 1 && p.NodesHealthy == 1 && p.NodesExpected == 1
	})

	e.must("PUT", "/v1/volume/csi/shared/create", map[string]any{"Volumes": []any{map[string]any{
		"ID": "shared", "PluginID": "hostpath", "Type": "csi",
		"RequestedCapabilities": []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}}}}})
	var vol struct {
		ExternalID  string
		Schedulable bool
	}
	if !e.get("/v1/volume/csi/shared", &vol) || vol.ExternalID != "shared" || !vol.Schedulable {
		t.Fatalf("created volume %+v", vol)
	}

	e.must("PUT", "/v1/jobs", batch("writer", task("write", 32, "/bin/sh", "-c", "echo written-by-writer > data/msg")))
	e.waitComplete("writer")
	if b, err := os.ReadFile(filepath.Join(root, "volumes", "shared", "msg")); err != nil || string(b) != "written-by-writer\n" {
		t.Fatalf("the file on the volume: %q %v", b, err)
	}
	testagent.WaitFor(t, csiTimeout, "the writer's claim released", func() bool {
		var v struct{ WriteClaims, PastClaims map[string]any }
		return e.get("/v1/volume/csi/shared", &v) && len(v.WriteClaims) == 0 && len(v.PastClaims) == 0
	})

	// The release went through the client: the watcher's node detach
	// reached the plugin over the client API and gRPC.
	if _, metrics := e.do("GET", "/v1/metrics?format=prometheus", nil); !strings.Contains(string(metrics), `ordo_volumewatcher_calls_total{result="ok",step="node"}`) {
		t.Errorf("no successful node detach in the watcher's metrics")
	}
	// The volume's history names its registration and the claim's release.
	var hist []struct{ Type string }
	if !e.get("/v1/history/volume/default/shared", &hist) || len(hist) < 2 || hist[0].Type != "CSIVolumeRegistered" ||
		hist[len(hist)-1].Type != "CSIVolumeClaimsUpdated" {
		t.Errorf("volume history: %+v", hist)
	}
	e.must("PUT", "/v1/jobs", batch("reader", task("read", 32, "/bin/sh", "-c", "cat data/msg")))
	r := e.waitComplete("reader")
	if got := e.logs(r.ID); !strings.Contains(got, "read.stdout: written-by-writer") {
		t.Fatalf("the reader's output:\n%s", got)
	}
	testagent.WaitFor(t, csiTimeout, "the reader's claim released", func() bool {
		var v struct{ WriteClaims map[string]any }
		return e.get("/v1/volume/csi/shared", &v) && len(v.WriteClaims) == 0
	})
	// Deleted through the controller: the directory goes, then the volume.
	e.must("DELETE", "/v1/volume/csi/shared/delete", nil)
	if _, err := os.Stat(filepath.Join(root, "volumes", "shared")); !os.IsNotExist(err) {
		t.Errorf("the volume's directory after delete: %v", err)
	}
	if code, _ := e.do("GET", "/v1/volume/csi/shared", nil); code != 404 {
		t.Errorf("the volume after delete: %d", code)
	}
}
