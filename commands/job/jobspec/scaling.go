package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Scaling: a group's `scaling { min max enabled type policy { … } }`, in
// HCL and Nomad's JSON (TaskGroup.Scaling). The block bounds the group's
// count for `job scale`; its policy is an autoscaler's, stored as given.

type specScaling struct {
	Min     *int64         `json:"Min"`
	Max     *int64         `json:"Max"`
	Enabled *bool          `json:"Enabled"`
	Type    *string        `json:"Type"`
	Policy  map[string]any `json:"Policy"`
}

var scalingSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "min"}, {Name: "max"}, {Name: "enabled"}, {Name: "type"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "policy"}},
}

// scaling reads a group's scaling block, nil when it has none.
func (d *decoder) scaling(c *hcl.BodyContent, path string) *specScaling {
	b := d.single(c, path, "scaling")
	if b == nil {
		return nil
	}
	path += ".scaling"
	d.record(path, b.DefRange)
	sc := d.content(b.Body, path, scalingSchema)
	if sc == nil {
		return nil
	}
	s := &specScaling{Enabled: d.bool(sc, path, "enabled"), Type: d.str(sc, path, "type")}
	if n := d.int(sc, path, "min"); n != nil {
		s.Min = new(int64(*n))
	}
	if n := d.int(sc, path, "max"); n != nil {
		s.Max = new(int64(*n))
	}
	if pb := d.single(sc, path, "policy"); pb != nil {
		s.Policy = d.freeform(pb.Body, path+".policy", true)
	}
	return s
}

// canonicalScaling sets tg's scaling block from g's: the count defaults to
// the block's min, min to the count, enabled to true, the type to
// horizontal; a missing max is kept as -1 for Validate to refuse.
func canonicalScaling(tg *events.TaskGroup, g *specGroup) {
	s := g.Scaling
	if s == nil {
		return
	}
	if g.Count == nil && s.Min != nil {
		tg.Count = int(*s.Min)
	}
	p := &events.ScalingPolicy{Type: or(s.Type, ""), Min: or(s.Min, int64(tg.Count)),
		Max: or(s.Max, -1), Enabled: or(s.Enabled, true), Policy: events.CanonicalConfig(s.Policy)}
	if p.Type == "" { // Nomad's API JSON sends "" for the default
		p.Type = events.ScalingPolicyTypeHorizontal
	}
	if len(p.Policy) == 0 {
		p.Policy = nil
	}
	tg.Scaling = p
}

// validateScaling checks a group's scaling block against its count, as
// Nomad's ScalingPolicy validation does.
func validateScaling(job *events.Job, tg *events.TaskGroup) error {
	s := tg.Scaling
	if s == nil {
		return nil
	}
	path := groupPath(tg.Name) + ".scaling"
	switch {
	case job.Type == events.JobTypeSystem || job.Type == events.JobTypeSysbatch:
		return commands.Invalid(path, "%s jobs run one allocation per node and do not scale", job.Type)
	case s.Type != events.ScalingPolicyTypeHorizontal:
		return commands.Invalid(path+".type", "%q is not horizontal", s.Type)
	case s.Max < 0:
		return commands.Invalid(path+".max", "must be set, at least 0")
	case s.Min < 0:
		return commands.Invalid(path+".min", "%d is negative", s.Min)
	case s.Max < s.Min:
		return commands.Invalid(path+".max", "%d is less than min %d", s.Max, s.Min)
	case int64(tg.Count) < s.Min:
		return commands.Invalid(path+".min", "the group's count %d is less than min %d", tg.Count, s.Min)
	case int64(tg.Count) > s.Max:
		return commands.Invalid(path+".max", "the group's count %d is greater than max %d", tg.Count, s.Max)
	}
	return nil
}
