package services

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// AllocLiveOp is the precondition operation that holds at apply when an
// allocation exists on the node named in the precondition and is not
// terminal: a registration decided while its allocation ran is refused
// once the allocation has stopped, been lost or collected, so it can
// never outlive the cleanup of its allocation.
const AllocLiveOp events.PreconditionOp = "services-alloc-live"

// AllocLivePrecondition is the precondition a registration of services
// of allocation alloc by node carries.
func AllocLivePrecondition(node, alloc string) events.Precondition {
	return events.Precondition{Table: allocs.Table, Key: alloc + "\x00" + node, Op: AllocLiveOp}
}

// AllocLive returns why allocation alloc may not hold registrations by
// node: "" when it exists on node and is not terminal. The command
// decides with it and the apply-time check runs it, so both agree.
func AllocLive(v projections.View, node, alloc string) (string, error) {
	a, err := allocs.Get(v, alloc)
	if errors.Is(err, projections.ErrNotFound) {
		return fmt.Sprintf("allocation %q does not exist", alloc), nil
	} else if err != nil {
		return "", err
	}
	switch {
	case a.NodeID != node:
		return fmt.Sprintf("allocation %q is not on node %q", alloc, node), nil
	case a.ClientTerminal():
		return fmt.Sprintf("allocation %q is %s", alloc, a.ClientStatus), nil
	case a.ServerTerminal():
		return fmt.Sprintf("allocation %q is stopped (desired status %s)", alloc, a.DesiredStatus), nil
	}
	return "", nil
}

func init() {
	projections.RegisterCheck(AllocLiveOp, func(v projections.View, p events.Precondition) string {
		alloc, node, _ := strings.Cut(p.Key, "\x00")
		why, err := AllocLive(v, node, alloc)
		if err != nil {
			return fmt.Sprintf("read allocation %s: %v", alloc, err)
		}
		return why
	})
}
