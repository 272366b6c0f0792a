package services

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
)

// Limits of a registration.
const (
	// MaxRegistrations is the most registrations one client call carries.
	MaxRegistrations = 1024
	// MaxID is the longest registration, alloc, job or node id, in bytes.
	MaxID = 256
	// MaxName is the longest service name, in bytes.
	MaxName = 128
	// MaxTags is the most tags of one registration.
	MaxTags = 64
	// MaxChecks is the most check statuses of one registration.
	MaxChecks = 32
	// MaxOutput is the longest check output kept, in bytes.
	MaxOutput = 4096
)

// ValidID reports whether id may name a registration (or its allocation,
// job or node): 1-MaxID bytes without spaces, slashes or control
// characters, as a *commands.ValidationError naming field.
func ValidID(field, id string) error {
	if id == "" || len(id) > MaxID {
		return commands.Invalid(field, "must be 1-%d bytes", MaxID)
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '/' {
			return commands.Invalid(field, "%q must not contain spaces, slashes or control characters", id)
		}
	}
	return nil
}

// ValidName reports whether name may name a service: 1-MaxName bytes
// without spaces, slashes or control characters (names are interpolated
// per allocation, so Nomad's stricter rule is the jobspec's to apply).
func ValidName(field, name string) error {
	if name == "" || len(name) > MaxName {
		return commands.Invalid(field, "must be 1-%d bytes", MaxName)
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '/' {
			return commands.Invalid(field, "%q must not contain spaces, slashes or control characters", name)
		}
	}
	return nil
}

// validate checks one registration alone; field prefixes its fields.
func validate(field, node string, s *events.ServiceRegistration) error {
	if err := ValidID(field+".ID", s.ID); err != nil {
		return err
	}
	if err := ValidName(field+".ServiceName", s.ServiceName); err != nil {
		return err
	}
	if err := namespace.ValidName(field+".Namespace", s.Namespace); err != nil {
		return err
	}
	if s.NodeID != "" && s.NodeID != node {
		return commands.Invalid(field+".NodeID", "%q is not the registering node %q", s.NodeID, node)
	}
	if err := ValidID(field+".AllocID", s.AllocID); err != nil {
		return err
	}
	if err := ValidID(field+".JobID", s.JobID); err != nil {
		return err
	}
	if strings.TrimSpace(s.Address) == "" {
		return commands.Invalid(field+".Address", "must not be empty")
	}
	if len(s.Address) > MaxName*2 {
		return commands.Invalid(field+".Address", "must be at most %d bytes", MaxName*2)
	}
	if s.Port < 0 || s.Port > 65535 {
		return commands.Invalid(field+".Port", "%d is not a port (0-65535)", s.Port)
	}
	if len(s.Tags) > MaxTags {
		return commands.Invalid(field+".Tags", "%d tags exceed %d", len(s.Tags), MaxTags)
	}
	for i, t := range s.Tags {
		if len(t) > MaxName*2 || strings.ContainsFunc(t, unicode.IsControl) {
			return commands.Invalid(fmt.Sprintf("%s.Tags[%d]", field, i), "must be at most %d bytes without control characters", MaxName*2)
		}
	}
	if len(s.Checks) > MaxChecks {
		return commands.Invalid(field+".Checks", "%d checks exceed %d", len(s.Checks), MaxChecks)
	}
	for i, c := range s.Checks {
		cf := fmt.Sprintf("%s.Checks[%d]", field, i)
		switch c.Status {
		case events.CheckPending, events.CheckPassing, events.CheckWarning, events.CheckCritical:
		default:
			return commands.Invalid(cf+".Status", "%q is not one of pending, passing, warning, critical", c.Status)
		}
		if len(c.Output) > MaxOutput {
			return commands.Invalid(cf+".Output", "must be at most %d bytes", MaxOutput)
		}
	}
	return nil
}
