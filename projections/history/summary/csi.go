package summary

import (
	"strings"

	"github.com/ordoplane/ordo/events"
)

// CSI volume lines name the plugin, modes and claims, never a secret.
func init() {
	registerSensitive("CSIVolumeRegistered", func(s *step, p events.Payload) string {
		v := &p.(*events.CSIVolumeRegistered).Volume
		if s.t.kind != events.KindVolume {
			return "volume " + v.ID + " registered (plugin " + v.PluginID + ")"
		}
		created := !s.known()
		var modes []string
		for _, c := range v.RequestedCapabilities {
			modes = append(modes, c.AccessMode+"/"+c.AttachmentMode)
		}
		s.set("PluginID", v.PluginID)
		caps := s.set("Capabilities", strings.Join(modes, ","))
		if created {
			return "registered on plugin " + v.PluginID + " (" + strings.Join(modes, ", ") + ")"
		}
		if caps != nil {
			return "re-registered, " + trans("capabilities", caps)
		}
		return "re-registered"
	})
	register("CSIVolumeDeregistered", func(s *step, p events.Payload) string {
		d := p.(*events.CSIVolumeDeregistered)
		what := "deregistered"
		if d.Force {
			what = "deregistered (forced)"
		}
		if s.t.kind != events.KindVolume {
			return "volume " + d.ID + " " + what
		}
		s.reset()
		return what
	})
	register("CSIVolumeClaimsUpdated", func(s *step, p events.Payload) string {
		u := p.(*events.CSIVolumeClaimsUpdated)
		parts := make([]string, 0, len(u.Claims))
		for _, c := range u.Claims {
			parts = append(parts, c.Mode+" claim of "+c.AllocID+" "+c.State)
		}
		line := strings.Join(parts, ", ")
		if s.t.kind != events.KindVolume {
			return "volume " + u.VolumeID + ": " + line
		}
		return line
	})
}
