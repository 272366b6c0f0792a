package csi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Spec is a parsed volume specification: the volume and its secrets.
type Spec struct {
	Volume  events.CSIVolume
	Secrets map[string]string
}

// MaxSpecBytes bounds a volume specification file.
const MaxSpecBytes = 1 << 20

// specFile is the HCL shape of a volume file (Nomad's volume spec).
type specFile struct {
	ID              string            `hcl:"id"`
	Name            string            `hcl:"name,optional"`
	Namespace       string            `hcl:"namespace,optional"`
	Type            string            `hcl:"type"`
	PluginID        string            `hcl:"plugin_id"`
	ExternalID      string            `hcl:"external_id,optional"`
	CapacityMin     string            `hcl:"capacity_min,optional"`
	CapacityMax     string            `hcl:"capacity_max,optional"`
	Capabilities    []specCapability  `hcl:"capability,block"`
	MountOptions    *specMountOptions `hcl:"mount_options,block"`
	TopologyRequest *specTopologyReq  `hcl:"topology_request,block"`
	Secrets         *specMap          `hcl:"secrets,block"`
	Parameters      *specMap          `hcl:"parameters,block"`
	Context         *specMap          `hcl:"context,block"`
}

type specCapability struct {
	AccessMode     string `hcl:"access_mode"`
	AttachmentMode string `hcl:"attachment_mode"`
}

type specMountOptions struct {
	FSType     string   `hcl:"fs_type,optional"`
	MountFlags []string `hcl:"mount_flags,optional"`
}

type specTopologyReq struct {
	Required  *specTopologies `hcl:"required,block"`
	Preferred *specTopologies `hcl:"preferred,block"`
}

type specTopologies struct {
	Topologies []specTopology `hcl:"topology,block"`
}

type specTopology struct {
	Segments map[string]string `hcl:"segments"`
}

// specMap is a block of string attributes (secrets, parameters, context).
type specMap struct {
	Body hcl.Body `hcl:",remain"`
}

// ParseSpec parses a volume file: JSON (Nomad's api.CSIVolume, bare or
// as {"Volumes": [...]} with one volume) when it starts with "{", else
// HCL. Errors name the field (and the line in HCL) and the problem; the
// result is validated with ValidateVolume.
func ParseSpec(filename string, src []byte) (*Spec, error) {
	if len(src) > MaxSpecBytes {
		return nil, &commands.TooLargeError{Limit: MaxSpecBytes}
	}
	var s *Spec
	var err error
	if trimmed := bytes.TrimSpace(src); len(trimmed) > 0 && trimmed[0] == '{' {
		s, err = parseJSON(trimmed)
	} else {
		s, err = parseHCL(filename, src)
	}
	if err != nil {
		return nil, err
	}
	if s.Volume.Namespace == "" {
		s.Volume.Namespace = "default"
	}
	if err := ValidateVolume(&s.Volume, s.Secrets); err != nil {
		return nil, err
	}
	return s, nil
}

// jsonVolume is the JSON shape: Nomad's api.CSIVolume fields ordo keeps.
type jsonVolume struct {
	events.CSIVolume
	Type    string
	Secrets map[string]string
}

// RegisterBody is the body of PUT /v1/volume/csi/:id (Nomad's
// api.CSIVolumeRegisterRequest).
type RegisterBody struct {
	Volumes []jsonVolume
}

// DecodeRegister reads a register body — {"Volumes": [one volume]} or a
// bare volume — into a Spec; not validated (Register.Validate does it).
func DecodeRegister(b []byte) (*Spec, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, commands.Invalid("body", "not a JSON object: %v", err)
	}
	var jv jsonVolume
	if raw, ok := probe["Volumes"]; ok {
		var list []jsonVolume
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, commands.Invalid("Volumes", "%v", err)
		}
		if len(list) != 1 {
			return nil, commands.Invalid("Volumes", "register one volume per request, not %d", len(list))
		}
		jv = list[0]
	} else if err := json.Unmarshal(b, &jv); err != nil {
		return nil, commands.Invalid("body", "%v", err)
	}
	if jv.Type != "" && jv.Type != events.VolumeTypeCSI {
		return nil, commands.Invalid("Type", "%q is not a CSI volume type (csi)", jv.Type)
	}
	return &Spec{Volume: jv.CSIVolume, Secrets: jv.Secrets}, nil
}

func parseJSON(b []byte) (*Spec, error) { return DecodeRegister(b) }

func parseHCL(filename string, src []byte) (*Spec, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	var sf specFile
	if diags := gohcl.DecodeBody(f.Body, nil, &sf); diags.HasErrors() {
		return nil, diagError(diags)
	}
	if sf.Type != events.VolumeTypeCSI {
		return nil, commands.Invalid("type", "%q is not a CSI volume type (csi)", sf.Type)
	}
	v := events.CSIVolume{ID: sf.ID, Name: sf.Name, Namespace: sf.Namespace, PluginID: sf.PluginID, ExternalID: sf.ExternalID}
	var err error
	if v.RequestedCapacityMin, err = ParseBytes("capacity_min", sf.CapacityMin); err != nil {
		return nil, err
	}
	if v.RequestedCapacityMax, err = ParseBytes("capacity_max", sf.CapacityMax); err != nil {
		return nil, err
	}
	for _, c := range sf.Capabilities {
		v.RequestedCapabilities = append(v.RequestedCapabilities, events.CSIVolumeCapability{AccessMode: c.AccessMode, AttachmentMode: c.AttachmentMode})
	}
	if mo := sf.MountOptions; mo != nil {
		v.MountOptions = &events.CSIMountOptions{FSType: mo.FSType, MountFlags: mo.MountFlags}
	}
	if tr := sf.TopologyRequest; tr != nil {
		v.RequestedTopologies = &events.CSITopologyRequest{Required: topologies(tr.Required), Preferred: topologies(tr.Preferred)}
	}
	s := &Spec{Volume: v}
	for _, m := range []struct {
		field string
		block *specMap
		dst   *map[string]string
	}{{"secrets", sf.Secrets, &s.Secrets}, {"parameters", sf.Parameters, &s.Volume.Parameters}, {"context", sf.Context, &s.Volume.Context}} {
		if m.block == nil {
			continue
		}
		out, err := stringAttrs(m.field, m.block.Body)
		if err != nil {
			return nil, err
		}
		*m.dst = out
	}
	return s, nil
}

func topologies(t *specTopologies) []events.CSITopology {
	if t == nil {
		return nil
	}
	var out []events.CSITopology
	for _, x := range t.Topologies {
		out = append(out, events.CSITopology{Segments: x.Segments})
	}
	return out
}

// stringAttrs reads a block of string attributes.
func stringAttrs(field string, body hcl.Body) (map[string]string, error) {
	attrs, diags := body.JustAttributes()
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	out := map[string]string{}
	for name, a := range attrs {
		var s string
		if diags := gohcl.DecodeExpression(a.Expr, nil, &s); diags.HasErrors() {
			return nil, commands.Invalid(field+"."+name, "must be a string (%s)", a.Range)
		}
		out[name] = s
	}
	return out, nil
}

// diagError turns HCL diagnostics into a validation error naming where.
func diagError(diags hcl.Diagnostics) error {
	errs := diags.Errs()
	if len(errs) == 0 {
		return errors.New("invalid volume file")
	}
	var d *hcl.Diagnostic
	if errors.As(errs[0], &d) && d.Subject != nil {
		return commands.Invalid(d.Subject.String(), "%s: %s", d.Summary, d.Detail)
	}
	return commands.Invalid("file", "%v", errs[0])
}

// ParseBytes reads a size such as "10GiB", "500MB", "1G" or "1024"
// (bytes); "" is 0.
func ParseBytes(field, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, commands.Invalid(field, "%q is not a size (such as 10GiB, 500MB or 1024)", s)
	}
	return n * mult, nil
}

// String renders a spec's volume for messages.
func (s *Spec) String() string { return fmt.Sprintf("volume %s/%s", s.Volume.Namespace, s.Volume.ID) }

// Body returns the register body of the spec: Nomad's
// {"Volumes": [volume]} with its secrets and type.
func (s *Spec) Body() RegisterBody {
	return RegisterBody{Volumes: []jsonVolume{{CSIVolume: s.Volume, Type: events.VolumeTypeCSI, Secrets: s.Secrets}}}
}
