package csi

import (
	"errors"
	"reflect"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pc "github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// Register creates a volume, or merges a registration onto an existing
// one (N18): fields the request sets replace the volume's, fields it
// leaves unset keep theirs, immutable fields may not change, and the
// server-controlled fields (claims) are never touched.
type Register struct {
	Volume  events.CSIVolume
	Secrets map[string]string
}

var _ commands.Command = Register{}

// Validate implements commands.Command.
func (r Register) Validate() error { return ValidateVolume(&r.Volume, r.Secrets) }

// Decide implements commands.Command.
func (r Register) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	pre, err := namespaceExists(v, r.Volume.Namespace)
	if err != nil {
		return commands.Decision{}, err
	}
	if _, err := pc.GetPlugin(v, r.Volume.PluginID); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, commands.Invalid("PluginID", "no CSI plugin %q is registered", r.Volume.PluginID)
	} else if err != nil {
		return commands.Decision{}, err
	}
	key := pc.Key(r.Volume.Namespace, r.Volume.ID)
	old, err := pc.GetVolume(v, r.Volume.Namespace, r.Volume.ID)
	if errors.Is(err, projections.ErrNotFound) {
		pre = append(pre, events.Precondition{Table: pc.VolumesTable, Key: key, Op: events.Absent})
		return commands.Decision{Events: []events.Payload{&events.CSIVolumeRegistered{Volume: r.Volume, Secrets: r.Secrets}},
			Preconditions: pre}, nil
	} else if err != nil {
		return commands.Decision{}, err
	}
	merged, secrets, err := Merge(old, &r.Volume, r.Secrets)
	if err != nil {
		return commands.Decision{}, err
	}
	pre = append(pre, events.Precondition{Table: pc.VolumesTable, Key: key, Op: events.ModifyIndex, Index: old.ModifyIndex})
	if reflect.DeepEqual(merged, old.CSIVolume) && reflect.DeepEqual(secrets, old.Secrets) {
		return commands.Decision{}, nil // nothing changes: nothing to append
	}
	return commands.Decision{Events: []events.Payload{&events.CSIVolumeRegistered{Volume: merged, Secrets: secrets}},
		Preconditions: pre}, nil
}

// Merge returns the user-settable fields of old with those req sets
// applied (N18), or an error naming an immutable field req would change
// or a claim its capabilities would no longer cover.
func Merge(old *pc.Volume, req *events.CSIVolume, secrets map[string]string) (events.CSIVolume, map[string]string, error) {
	m := old.CSIVolume
	if req.PluginID != m.PluginID {
		return m, nil, commands.Invalid("PluginID", "a registered volume's plugin cannot change (%q to %q)", m.PluginID, req.PluginID)
	}
	if req.ExternalID != "" && m.ExternalID != "" && req.ExternalID != m.ExternalID {
		return m, nil, commands.Invalid("ExternalID", "a registered volume's external id cannot change (%q to %q)", m.ExternalID, req.ExternalID)
	}
	if req.ExternalID != "" {
		m.ExternalID = req.ExternalID
	}
	if req.RequestedTopologies != nil {
		if m.RequestedTopologies != nil && !reflect.DeepEqual(req.RequestedTopologies, m.RequestedTopologies) {
			return m, nil, commands.Invalid("RequestedTopologies", "a registered volume's topology request cannot change")
		}
		m.RequestedTopologies = req.RequestedTopologies
	}
	if len(req.Topologies) > 0 {
		if len(m.Topologies) > 0 && !reflect.DeepEqual(req.Topologies, m.Topologies) {
			return m, nil, commands.Invalid("Topologies", "a registered volume's topologies cannot change")
		}
		m.Topologies = req.Topologies
	}
	if req.Capacity != 0 {
		m.Capacity = req.Capacity
	}
	if req.RequestedCapacityMin != 0 || req.RequestedCapacityMax != 0 {
		m.RequestedCapacityMin, m.RequestedCapacityMax = req.RequestedCapacityMin, req.RequestedCapacityMax
	}
	if c := m.Capacity; c > 0 && (c < m.RequestedCapacityMin || (m.RequestedCapacityMax > 0 && c > m.RequestedCapacityMax)) {
		return m, nil, commands.Invalid("RequestedCapacityMin", "the volume's capacity %d is outside the requested range %d-%d",
			c, m.RequestedCapacityMin, m.RequestedCapacityMax)
	}
	if req.Name != "" {
		m.Name = req.Name
	}
	if req.MountOptions != nil {
		m.MountOptions = req.MountOptions
	}
	if req.Parameters != nil {
		m.Parameters = req.Parameters
	}
	if req.Context != nil {
		m.Context = req.Context
	}
	m.RequestedCapabilities = req.RequestedCapabilities
	probe := pc.Volume{CSIVolume: m}
	for _, c := range old.Claims {
		if !probe.Supports(c.AccessMode, c.AttachmentMode) {
			return m, nil, &commands.ConflictError{Reason: "the capabilities no longer include " + c.AccessMode + "/" +
				c.AttachmentMode + ", which allocation " + c.AllocID + " claims the volume in"}
		}
	}
	out := old.Secrets
	if secrets != nil {
		out = secrets
	}
	return m, out, nil
}

// namespaceExists refuses a namespace that does not exist and returns the
// precondition that it still does at apply (default always does).
func namespaceExists(v projections.View, ns string) ([]events.Precondition, error) {
	if ns == namespaces.Default {
		return nil, nil
	}
	if _, err := namespaces.Get(v, ns); errors.Is(err, projections.ErrNotFound) {
		return nil, commands.Invalid("Namespace", "namespace %q does not exist", ns)
	} else if err != nil {
		return nil, err
	}
	return []events.Precondition{{Table: namespaces.Table, Key: ns, Op: events.Exists}}, nil
}
