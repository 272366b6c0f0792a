package jobspec_test

import (
	"reflect"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
)

// TestHostVolumeBlocks: a group's host volume and a task's volume_mount
// parse from HCL and from Nomad's JSON to the same job.
func TestHostVolumeBlocks(t *testing.T) {
	src := job2(`    volume "certs" {
      type      = "host"
      source    = "ca-certificates"
      read_only = true
    }
    volume "data" {
      type   = "host"
      source = "data"
    }`, `      volume_mount {
        volume      = "certs"
        destination = "/etc/ssl/certs"
        read_only   = true
      }
      volume_mount {
        volume      = "data"
        destination = "${NOMAD_ALLOC_DIR}/data"
      }`)
	nomad := nomadJob(func(tg *api.TaskGroup, task *api.Task) {
		tg.Volumes = map[string]*api.VolumeRequest{
			"certs": {Name: "certs", Type: "host", Source: "ca-certificates", ReadOnly: true},
			"data":  {Name: "data", Type: "host", Source: "data"},
		}
		task.VolumeMounts = []*api.VolumeMount{
			{Volume: new("certs"), Destination: new("/etc/ssl/certs"), ReadOnly: new(true)},
			{Volume: new("data"), Destination: new("${NOMAD_ALLOC_DIR}/data")},
		}
	})
	job := parseBoth(t, src, nomad)
	tg := job.TaskGroups[0]
	wantVols := map[string]*events.VolumeRequest{
		"certs": {Name: "certs", Type: events.VolumeTypeHost, Source: "ca-certificates", ReadOnly: true},
		"data":  {Name: "data", Type: events.VolumeTypeHost, Source: "data"},
	}
	if !reflect.DeepEqual(tg.Volumes, wantVols) {
		t.Fatalf("volumes %+v", tg.Volumes)
	}
	wantMounts := []events.VolumeMount{{Volume: "certs", Destination: "/etc/ssl/certs", ReadOnly: true},
		{Volume: "data", Destination: "${NOMAD_ALLOC_DIR}/data"}}
	if !reflect.DeepEqual(tg.Tasks[0].VolumeMounts, wantMounts) {
		t.Fatalf("mounts %+v", tg.Tasks[0].VolumeMounts)
	}
}

func TestHostVolumeErrors(t *testing.T) {
	vol := func(body, task string) string { return job2("    volume \"v\" {\n"+body+"\n    }", task) }
	checkErrCases(t, []errCase{
		{"no source", job2("    volume \"v\" {  # <-\n      type = \"host\"\n    }", ""), "job.group[g].volume[v].source", "must name the volume"},
		{"no type", job2("    volume \"v\" {  # <-\n      source = \"x\"\n    }", ""), "job.group[g].volume[v].type", "not csi or host"},
		{"access mode", vol("      type = \"host\"\n      source = \"x\"\n      access_mode = \"single-node-writer\"  # <-", ""),
			"job.group[g].volume[v].access_mode", "for csi volumes"},
		{"per_alloc", vol("      type = \"host\"\n      source = \"x\"\n      per_alloc = true  # <-", ""),
			"job.group[g].volume[v].per_alloc", "for csi volumes"},
		{"attachment mode", vol("      type = \"host\"\n      source = \"x\"\n      attachment_mode = \"file-system\"  # <-", ""),
			"job.group[g].volume[v].attachment_mode", "for csi volumes"},
		{"mount options", vol("      type = \"host\"\n      source = \"x\"\n      mount_options {  # <-\n        fs_type = \"ext4\"\n      }", ""),
			"job.group[g].volume[v].mount_options", "for csi volumes"},
		{"mount unknown volume", vol("      type = \"host\"\n      source = \"x\"",
			"      volume_mount {\n        volume = \"w\"  # <-\n        destination = \"/d\"\n      }"),
			"job.group[g].task[t].volume_mount[0].volume", "names no volume"},
		{"mount without destination", vol("      type = \"host\"\n      source = \"x\"",
			"      volume_mount {  # <-\n        volume = \"v\"\n      }"),
			"job.group[g].task[t].volume_mount[0].destination", "must not be empty"},
		{"mount unknown attribute", vol("      type = \"host\"\n      source = \"x\"",
			"      volume_mount {\n        volume = \"v\"\n        destination = \"/d\"\n        selinux_label = \"z\"  # <-\n      }"),
			"job.group[g].task[t].volume_mount[0].selinux_label", "Unsupported argument"},
	})
}
