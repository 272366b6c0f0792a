package jobspec

import (
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Volumes: a group's `volume "name" { type source read_only access_mode
// attachment_mode per_alloc mount_options { fs_type mount_flags } }`, a
// task's `volume_mount { volume destination read_only }` and
// `csi_plugin { id type mount_dir }`, in HCL and Nomad's JSON.

type specVolume struct {
	Name           *string           `json:"Name"`
	Type           *string           `json:"Type"`
	Source         *string           `json:"Source"`
	ReadOnly       *bool             `json:"ReadOnly"`
	AccessMode     *string           `json:"AccessMode"`
	AttachmentMode *string           `json:"AttachmentMode"`
	PerAlloc       *bool             `json:"PerAlloc"`
	MountOptions   *specMountOptions `json:"MountOptions"`
}

type specMountOptions struct {
	FSType     *string  `json:"FSType"`
	MountFlags []string `json:"MountFlags"`
}

type specVolumeMount struct {
	Volume      *string `json:"Volume"`
	Destination *string `json:"Destination"`
	ReadOnly    *bool   `json:"ReadOnly"`
}

type specCSIPlugin struct {
	ID       *string `json:"ID"`
	Type     *string `json:"Type"`
	MountDir *string `json:"MountDir"`
}

var volumeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "source"}, {Name: "read_only"},
		{Name: "access_mode"}, {Name: "attachment_mode"}, {Name: "per_alloc"}},
	Blocks: []hcl.BlockHeaderSchema{{Type: "mount_options"}},
}

var mountOptionsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "fs_type"}, {Name: "mount_flags"}},
}

var volumeMountSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "volume"}, {Name: "destination"}, {Name: "read_only"}},
}

var csiPluginSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "id"}, {Name: "type"}, {Name: "mount_dir"}},
}

func volumePath(group, name string) string { return groupPath(group) + ".volume[" + name + "]" }

// volumes reads a group's volume blocks.
func (d *decoder) volumes(c *hcl.BodyContent, group string) map[string]*specVolume {
	var out map[string]*specVolume
	for _, b := range c.Blocks.OfType("volume") {
		name := b.Labels[0]
		path := volumePath(group, name)
		d.record(path, b.DefRange)
		if out[name] != nil {
			d.fail(path, b.LabelRanges[0], "volume %q is declared twice in group %q", name, group)
			return out
		}
		if out == nil {
			out = map[string]*specVolume{}
		}
		v := &specVolume{Name: &name}
		out[name] = v
		vc := d.content(b.Body, path, volumeSchema)
		if vc == nil {
			continue
		}
		v.Type = d.str(vc, path, "type")
		v.Source = d.str(vc, path, "source")
		v.ReadOnly = d.bool(vc, path, "read_only")
		v.AccessMode = d.str(vc, path, "access_mode")
		v.AttachmentMode = d.str(vc, path, "attachment_mode")
		v.PerAlloc = d.bool(vc, path, "per_alloc")
		if mb := d.single(vc, path, "mount_options"); mb != nil {
			mp := path + ".mount_options"
			if mc := d.content(mb.Body, mp, mountOptionsSchema); mc != nil {
				v.MountOptions = &specMountOptions{FSType: d.str(mc, mp, "fs_type"), MountFlags: d.strList(mc, mp, "mount_flags")}
			}
		}
	}
	return out
}

// volumeMounts reads a task's volume_mount blocks.
func (d *decoder) volumeMounts(c *hcl.BodyContent, task string) []*specVolumeMount {
	var out []*specVolumeMount
	for i, b := range c.Blocks.OfType("volume_mount") {
		path := task + ".volume_mount[" + itoa(i) + "]"
		d.record(path, b.DefRange)
		mc := d.content(b.Body, path, volumeMountSchema)
		if mc == nil {
			continue
		}
		out = append(out, &specVolumeMount{Volume: d.str(mc, path, "volume"), Destination: d.str(mc, path, "destination"),
			ReadOnly: d.bool(mc, path, "read_only")})
	}
	return out
}

// csiPlugin reads a task's csi_plugin block.
func (d *decoder) csiPlugin(c *hcl.BodyContent, task string) *specCSIPlugin {
	b := d.single(c, task, "csi_plugin")
	if b == nil {
		return nil
	}
	path := task + ".csi_plugin"
	pc := d.content(b.Body, path, csiPluginSchema)
	if pc == nil {
		return &specCSIPlugin{}
	}
	return &specCSIPlugin{ID: d.str(pc, path, "id"), Type: d.str(pc, path, "type"), MountDir: d.str(pc, path, "mount_dir")}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// DefaultCSIMountDir is where a csi_plugin task serves its socket, in its
// task directory, when mount_dir is not set.
const DefaultCSIMountDir = "/csi"

func canonicalVolumes(in map[string]*specVolume) map[string]*events.VolumeRequest {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*events.VolumeRequest, len(in))
	for name, v := range in {
		if v == nil {
			v = &specVolume{}
		}
		r := &events.VolumeRequest{Name: or(v.Name, name), Type: or(v.Type, ""), Source: or(v.Source, ""),
			ReadOnly: or(v.ReadOnly, false), AccessMode: or(v.AccessMode, ""), AttachmentMode: or(v.AttachmentMode, ""),
			PerAlloc: or(v.PerAlloc, false)}
		if r.Name == "" {
			r.Name = name
		}
		if mo := v.MountOptions; mo != nil {
			r.MountOptions = &events.CSIMountOptions{FSType: or(mo.FSType, ""), MountFlags: mo.MountFlags}
			if len(r.MountOptions.MountFlags) == 0 {
				r.MountOptions.MountFlags = nil
			}
		}
		out[name] = r
	}
	return out
}

func canonicalVolumeMounts(in []*specVolumeMount) []events.VolumeMount {
	var out []events.VolumeMount
	for _, m := range in {
		if m == nil {
			m = &specVolumeMount{}
		}
		out = append(out, events.VolumeMount{Volume: or(m.Volume, ""), Destination: or(m.Destination, ""), ReadOnly: or(m.ReadOnly, false)})
	}
	return out
}

func canonicalCSIPlugin(p *specCSIPlugin) *events.TaskCSIPluginConfig {
	if p == nil {
		return nil
	}
	return &events.TaskCSIPluginConfig{ID: or(p.ID, ""), Type: or(p.Type, ""), MountDir: or(p.MountDir, DefaultCSIMountDir)}
}

// validateVolumes checks a group's volume requests and its tasks' mounts
// and plugin blocks.
func validateVolumes(job *events.Job, tg *events.TaskGroup) error {
	names := make([]string, 0, len(tg.Volumes))
	for name := range tg.Volumes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := tg.Volumes[name]
		path := volumePath(tg.Name, name)
		switch {
		case v == nil:
			return commands.Invalid(path, "missing")
		case v.Name != name:
			return commands.Invalid(path+".name", "%q differs from the block's label %q", v.Name, name)
		case v.Type != events.VolumeTypeCSI && v.Type != events.VolumeTypeHost:
			return commands.Invalid(path+".type", "%q is not csi or host", v.Type)
		case v.Source == "":
			return commands.Invalid(path+".source", "must name the volume")
		case v.Type == events.VolumeTypeHost && v.AccessMode != "":
			return commands.Invalid(path+".access_mode", "access_mode is for csi volumes")
		case v.Type == events.VolumeTypeHost && v.AttachmentMode != "":
			return commands.Invalid(path+".attachment_mode", "attachment_mode is for csi volumes")
		case v.Type == events.VolumeTypeHost && v.PerAlloc:
			return commands.Invalid(path+".per_alloc", "per_alloc is for csi volumes")
		case v.Type == events.VolumeTypeHost && v.MountOptions != nil:
			return commands.Invalid(path+".mount_options", "mount_options are for csi volumes")
		case v.Type == events.VolumeTypeCSI && v.AccessMode != "" && !events.ValidCSIAccessMode(v.AccessMode):
			return commands.Invalid(path+".access_mode", "%q is not an access mode (single-node-reader-only, single-node-writer, multi-node-reader-only, multi-node-single-writer, multi-node-multi-writer)", v.AccessMode)
		case v.Type == events.VolumeTypeCSI && v.AttachmentMode != "" && !events.ValidCSIAttachmentMode(v.AttachmentMode):
			return commands.Invalid(path+".attachment_mode", "%q is not file-system or block-device", v.AttachmentMode)
		case v.PerAlloc && (job.Type == events.JobTypeSystem || job.Type == events.JobTypeSysbatch):
			return commands.Invalid(path+".per_alloc", "%s jobs have no allocation index to name volumes by", job.Type)
		case v.ReadOnly && v.AccessMode != "" && v.AccessMode != events.CSIAccessSingleNodeReader && v.AccessMode != events.CSIAccessMultiNodeReader:
			return commands.Invalid(path+".read_only", "a read-only volume needs a reader access mode, not %q", v.AccessMode)
		}
	}
	for i := range tg.Tasks {
		t := &tg.Tasks[i]
		tp := taskPath(tg.Name, t.Name)
		for j, m := range t.VolumeMounts {
			mp := tp + ".volume_mount[" + itoa(j) + "]"
			if tg.Volumes[m.Volume] == nil {
				return commands.Invalid(mp+".volume", "%q names no volume of group %q", m.Volume, tg.Name)
			}
			if m.Destination == "" {
				return commands.Invalid(mp+".destination", "must not be empty")
			}
		}
		if p := t.CSIPluginConfig; p != nil {
			switch {
			case p.ID == "":
				return commands.Invalid(tp+".csi_plugin.id", "must not be empty")
			case p.Type != events.CSIPluginTypeController && p.Type != events.CSIPluginTypeNode && p.Type != events.CSIPluginTypeMonolith:
				return commands.Invalid(tp+".csi_plugin.type", "%q is not controller, node or monolith", p.Type)
			}
		}
	}
	return nil
}
