package jobspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// TestVolumeBlocks: a group's volume block, a task's volume_mount and
// csi_plugin parse from HCL (docs/examples/csi) and from their JSON form
// to the same canonical job.
func TestVolumeBlocks(t *testing.T) {
	src, err := os.ReadFile("../../../docs/examples/csi/db.hcl")
	if err != nil {
		t.Fatal(err)
	}
	job, err := jobspec.ParseHCL("db.hcl", src)
	if err != nil {
		t.Fatal(err)
	}
	want := &events.VolumeRequest{Name: "data", Type: "csi", Source: "db", AccessMode: events.CSIAccessSingleNodeWriter,
		AttachmentMode: events.CSIAttachmentFilesystem}
	if got := job.TaskGroups[0].Volumes["data"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("volume %+v, want %+v", got, want)
	}
	if got := job.TaskGroups[0].Tasks[0].VolumeMounts; !reflect.DeepEqual(got, []events.VolumeMount{{Volume: "data", Destination: "/data"}}) {
		t.Fatalf("mounts %+v", got)
	}
	b, _ := json.Marshal(map[string]any{"Job": job})
	back, err := jobspec.ParseJSON(bytes.NewReader(b), commands.DefaultBodyLimit)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, job) {
		t.Fatalf("JSON round trip differs:\n%+v\n%+v", back.TaskGroups[0], job.TaskGroups[0])
	}

	src, err = os.ReadFile("../../../docs/examples/csi/csi-plugin.hcl")
	if err != nil {
		t.Fatal(err)
	}
	pj, err := jobspec.ParseHCL("csi-plugin.hcl", src)
	if err != nil {
		t.Fatal(err)
	}
	if got := pj.TaskGroups[0].Tasks[0].CSIPluginConfig; !reflect.DeepEqual(got, &events.TaskCSIPluginConfig{ID: "hostpath", Type: "monolith", MountDir: "/csi"}) {
		t.Fatalf("csi_plugin %+v", got)
	}
}

func TestVolumeBlockErrors(t *testing.T) {
	group := func(volume, task string) string {
		return `job "j" {
  group "g" {
    ` + volume + `
    task "t" {
      driver = "exec"
      ` + task + `
    }
  }
}`
	}
	for _, tc := range []struct{ src, field string }{
		{group(`volume "data" {
type = "csi"
}`, ""), `job.group[g].volume[data].source`},
		{group(`volume "data" {
type = "nfs"
source = "x"
}`, ""), `job.group[g].volume[data].type`},
		{group(`volume "data" {
type = "csi"
source = "x"
access_mode = "everyone"
}`, ""), `job.group[g].volume[data].access_mode`},
		{group(`volume "data" {
type = "csi"
source = "x"
attachment_mode = "tape"
}`, ""), `job.group[g].volume[data].attachment_mode`},
		{group(`volume "data" {
type = "csi"
source = "x"
read_only = true
access_mode = "single-node-writer"
}`, ""), `job.group[g].volume[data].read_only`},
		{group(`volume "data" {
type = "csi"
source = "x"
}`, `volume_mount {
volume = "other"
destination = "/d"
}`), `job.group[g].task[t].volume_mount[0].volume`},
		{group(``, `csi_plugin {
id = "p"
type = "both"
}`), `job.group[g].task[t].csi_plugin.type`},
		{group(``, `csi_plugin {
type = "node"
}`), `job.group[g].task[t].csi_plugin.id`},
		{group(`volume "data" {
type = "csi"
source = "x"
}`+"\n"+`volume "data" {
type = "csi"
source = "y"
}`, ""), `job.group[g].volume[data]`},
	} {
		_, err := jobspec.ParseHCL("j.hcl", []byte(tc.src))
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, tc.field) {
			t.Errorf("%s\n: %v, want an error on %s", tc.src, err, tc.field)
		}
	}
}
