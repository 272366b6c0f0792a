package job

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// MaxDispatchPayload is the largest dispatch payload accepted, in bytes
// (Nomad's limit).
const MaxDispatchPayload = 16 << 10

// Dispatch runs a parameterized job once: it registers a child job
// "<parent>/dispatch-<unix seconds>-<8 hex>" (with IDPrefixTemplate,
// "<parent>/dispatch-<template>-<unix seconds>-<8 hex>") carrying the payload and the
// meta merged over the parent's, and an evaluation of it, as Nomad's
// Job.Dispatch.
type Dispatch struct {
	Namespace string
	ID        string
	Meta      map[string]string
	Payload   []byte
	// EvalPriority overrides the child's priority for its evaluation.
	EvalPriority int
	// IDPrefixTemplate, when set, goes into the child's id after
	// "dispatch-", as Nomad's id_prefix_template.
	IDPrefixTemplate string

	result Result
}

var _ commands.Command = (*Dispatch)(nil)

// Result returns what the last Decide decided; JobID is the child's id.
func (d *Dispatch) Result() Result { return d.result }

// Validate implements commands.Command.
func (d *Dispatch) Validate() error {
	if err := namespace.ValidName("namespace", d.Namespace); err != nil {
		return err
	}
	if err := ValidID("id", d.ID); err != nil {
		return err
	}
	if t := d.IDPrefixTemplate; t != "" {
		if err := ValidID("IdPrefixTemplate", t); err != nil {
			return err
		}
		if strings.Contains(t, "/") {
			return commands.Invalid("IdPrefixTemplate", "%q contains '/'", t)
		}
	}
	if len(d.Payload) > MaxDispatchPayload {
		return commands.Invalid("Payload", "%d bytes is larger than %d", len(d.Payload), MaxDispatchPayload)
	}
	for k := range d.Meta {
		if k == "" {
			return commands.Invalid("Meta", "keys must not be empty")
		}
	}
	return validPriority("Priority", d.EvalPriority)
}

// Decide implements commands.Command.
func (d *Dispatch) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	d.result = Result{}
	parent, err := lookup(v, d.Namespace, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if err := d.check(parent); err != nil {
		return commands.Decision{}, err
	}
	child := parent.Job
	stamp := fmt.Sprint(now.Unix())
	if d.IDPrefixTemplate != "" {
		stamp = d.IDPrefixTemplate + "-" + stamp
	}
	child.ID = fmt.Sprintf("%s/dispatch-%s-%s", parent.ID, stamp, shortHex(ids()))
	child.Name = child.ID
	child.ParentID, child.Dispatched, child.Payload = parent.ID, true, d.Payload
	if len(d.Meta) > 0 {
		meta := maps.Clone(parent.Meta)
		if meta == nil {
			meta = map[string]string{}
		}
		maps.Copy(meta, d.Meta)
		child.Meta = meta
	}
	dec, res, err := decideRegister(v, &child, true, 0, d.EvalPriority, now, ids)
	if err != nil {
		return commands.Decision{}, err
	}
	dec.Preconditions = append(dec.Preconditions, unchangedSince(d.Namespace, d.ID, parent))
	d.result = res
	return dec, nil
}

// check applies the parent's parameterized block to the request.
func (d *Dispatch) check(parent *jobs.Job) error {
	p := parent.ParameterizedJob
	switch {
	case !jobs.Parameterized(&parent.Job):
		return commands.Invalid("id", "job %q is not a parameterized job", d.ID)
	case parent.Stop:
		return commands.Invalid("id", "job %q is stopped", d.ID)
	case p.Payload == "required" && len(d.Payload) == 0:
		return commands.Invalid("Payload", "job %q requires a payload", d.ID)
	case p.Payload == "forbidden" && len(d.Payload) > 0:
		return commands.Invalid("Payload", "job %q forbids a payload", d.ID)
	}
	for _, k := range p.MetaRequired {
		if _, ok := d.Meta[k]; !ok {
			return commands.Invalid("Meta", "missing required key %q", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Meta)) {
		if !slices.Contains(p.MetaRequired, k) && !slices.Contains(p.MetaOptional, k) {
			return commands.Invalid("Meta", "key %q is neither required nor optional for job %q", k, d.ID)
		}
	}
	return nil
}
