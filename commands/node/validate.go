package node

import (
	"errors"
	"regexp"
	"unicode"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// validID is what a node id or datacenter may be: letters, digits, dots,
// dashes and underscores, 1–128 characters, starting with a letter or digit.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// MaxName is the longest node name accepted, in bytes.
const MaxName = 256

// DefaultPool is the node pool of a node that names none.
const DefaultPool = "default"

// ValidID reports whether id may identify a node, as a *commands.ValidationError.
func ValidID(field, id string) error {
	if !validID.MatchString(id) {
		return commands.Invalid(field, "%q must be 1-128 letters, digits, dots, dashes or underscores", id)
	}
	return nil
}

func validName(field, name string) error {
	if name == "" || len(name) > MaxName {
		return commands.Invalid(field, "must be 1-%d bytes", MaxName)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return commands.Invalid(field, "must not contain control characters")
		}
	}
	return nil
}

func validResources(field string, r events.NodeResources) error {
	switch {
	case r.CPU < 0:
		return commands.Invalid(field+".CPU", "must not be negative")
	case r.MemoryMB < 0:
		return commands.Invalid(field+".MemoryMB", "must not be negative")
	case r.DiskMB < 0:
		return commands.Invalid(field+".DiskMB", "must not be negative")
	}
	return nil
}

// lookup returns the node id, or a *commands.NotFoundError.
func lookup(v projections.View, id string) (*nodes.Node, error) {
	n, err := nodes.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "node", ID: id}
	}
	return n, err
}

// unchangedSince is the precondition that n is as it was read.
func unchangedSince(n *nodes.Node) []events.Precondition {
	return []events.Precondition{{Table: nodes.Table, Key: n.ID, Op: events.ModifyIndex, Index: n.ModifyIndex}}
}
