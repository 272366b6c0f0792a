package csi

import (
	"regexp"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
)

// Limits of a volume.
const (
	// MaxIDLength bounds volume and plugin ids.
	MaxIDLength = 128
	// MaxMapEntries bounds parameters, context, secrets and segments.
	MaxMapEntries = 64
	// MaxValueLength bounds a map key or value.
	MaxValueLength = 1024
)

// validID: letters, digits and - _ . [ ] (per-alloc volumes are "db[0]").
var validID = regexp.MustCompile(`^[A-Za-z0-9_.\-\[\]]{1,128}$`)

// ValidID refuses an id that is empty, too long or has characters other
// than letters, digits and - _ . [ ].
func ValidID(field, id string) error {
	if !validID.MatchString(id) {
		return commands.Invalid(field, "%q must be 1-%d letters, digits, '-', '_', '.', '[' or ']'", id, MaxIDLength)
	}
	return nil
}

// ValidateVolume checks a volume's user-settable fields as strictly for a
// re-register as for a creation (N18).
func ValidateVolume(v *events.CSIVolume, secrets map[string]string) error {
	if err := ValidID("ID", v.ID); err != nil {
		return err
	}
	if err := namespace.ValidName("Namespace", v.Namespace); err != nil {
		return err
	}
	if v.PluginID == "" {
		return commands.Invalid("PluginID", "is required")
	}
	if err := ValidID("PluginID", v.PluginID); err != nil {
		return err
	}
	if len(v.Name) > MaxIDLength {
		return commands.Invalid("Name", "%d bytes exceeds %d", len(v.Name), MaxIDLength)
	}
	if len(v.ExternalID) > MaxValueLength {
		return commands.Invalid("ExternalID", "%d bytes exceeds %d", len(v.ExternalID), MaxValueLength)
	}
	if len(v.RequestedCapabilities) == 0 {
		return commands.Invalid("RequestedCapabilities", "at least one capability (access_mode, attachment_mode) is required")
	}
	for _, c := range v.RequestedCapabilities {
		if !events.ValidCSIAccessMode(c.AccessMode) {
			return commands.Invalid("RequestedCapabilities.AccessMode", "%q is not an access mode (single-node-reader-only, single-node-writer, multi-node-reader-only, multi-node-single-writer, multi-node-multi-writer)", c.AccessMode)
		}
		if !events.ValidCSIAttachmentMode(c.AttachmentMode) {
			return commands.Invalid("RequestedCapabilities.AttachmentMode", "%q is not an attachment mode (file-system, block-device)", c.AttachmentMode)
		}
	}
	if v.RequestedCapacityMin < 0 || v.RequestedCapacityMax < 0 || v.Capacity < 0 {
		return commands.Invalid("RequestedCapacityMin", "capacities must not be negative")
	}
	if v.RequestedCapacityMax > 0 && v.RequestedCapacityMin > v.RequestedCapacityMax {
		return commands.Invalid("RequestedCapacityMax", "%d is below RequestedCapacityMin %d", v.RequestedCapacityMax, v.RequestedCapacityMin)
	}
	for field, m := range map[string]map[string]string{"Parameters": v.Parameters, "Context": v.Context, "Secrets": secrets} {
		if err := validMap(field, m); err != nil {
			return err
		}
	}
	if mo := v.MountOptions; mo != nil && len(mo.FSType) > MaxIDLength {
		return commands.Invalid("MountOptions.FSType", "%d bytes exceeds %d", len(mo.FSType), MaxIDLength)
	}
	tops := v.Topologies
	if r := v.RequestedTopologies; r != nil {
		tops = append(append(append([]events.CSITopology(nil), tops...), r.Required...), r.Preferred...)
	}
	for _, t := range tops {
		if len(t.Segments) == 0 {
			return commands.Invalid("Topologies", "a topology needs at least one segment")
		}
		if err := validMap("Topologies.Segments", t.Segments); err != nil {
			return err
		}
	}
	return nil
}

// validMap bounds a string map; it never quotes a value (secrets).
func validMap(field string, m map[string]string) error {
	if len(m) > MaxMapEntries {
		return commands.Invalid(field, "%d entries exceeds %d", len(m), MaxMapEntries)
	}
	for k, v := range m {
		if k == "" {
			return commands.Invalid(field, "keys must not be empty")
		}
		if len(k) > MaxValueLength || len(v) > MaxValueLength {
			return commands.Invalid(field, "key or value of %q exceeds %d bytes", k, MaxValueLength)
		}
	}
	return nil
}
