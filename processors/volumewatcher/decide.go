package volumewatcher

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Call is the plugin call a claim's next step needs.
type Call int

// The calls.
const (
	// CallNone: the step needs no call; record it.
	CallNone Call = iota
	// CallNodeDetach: unpublish and unstage on the claim's node.
	CallNodeDetach
	// CallControllerDetach: unpublish through the plugin's controller.
	CallControllerDetach
)

func (c Call) String() string {
	switch c {
	case CallNodeDetach:
		return "node"
	case CallControllerDetach:
		return "controller"
	}
	return "none"
}

// Step is the next step of one past claim: the call it needs (if any)
// and the claim as it is once the call succeeded.
type Step struct {
	Call Call
	Next events.CSIVolumeClaim
}

// ControllerCapability is the controller capability that makes a plugin
// publish volumes through its controller.
const ControllerCapability = "PUBLISH_UNPUBLISH_VOLUME"

// Decide returns the next step of past claim c of a volume on plugin p
// (nil: gone), whose node is n (nil: gone). It is pure.
func Decide(c events.CSIVolumeClaim, p *csi.Plugin, n *nodes.Node) (Step, bool) {
	next := c
	switch c.State {
	case events.CSIClaimTaken, "":
		return Step{}, false // live: not the watcher's
	case events.CSIClaimUnpublishing:
		next.State = events.CSIClaimNodeDetached
		if n == nil || n.Status == events.NodeStatusDown || n.HTTPAddr == "" || !runsOn(p, n.ID) {
			return Step{Call: CallNone, Next: next}, true
		}
		return Step{Call: CallNodeDetach, Next: next}, true
	case events.CSIClaimNodeDetached:
		next.State = events.CSIClaimControllerDetached
		if !controllerPublishes(p) {
			return Step{Call: CallNone, Next: next}, true
		}
		return Step{Call: CallControllerDetach, Next: next}, true
	case events.CSIClaimControllerDetached:
		next.State = events.CSIClaimFreed
		return Step{Call: CallNone, Next: next}, true
	}
	return Step{}, false
}

// controllerPublishes reports whether plugin p has a healthy controller
// that publishes volumes.
func controllerPublishes(p *csi.Plugin) bool {
	return p != nil && len(p.ControllersWith(ControllerCapability)) > 0
}

// runsOn reports whether plugin p has a node instance on node id: a node
// whose plugin is gone cannot unpublish, and must not hold the claim
// forever.
func runsOn(p *csi.Plugin, id string) bool {
	if p == nil {
		return false
	}
	_, ok := p.Nodes[id]
	return ok
}
