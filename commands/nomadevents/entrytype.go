package nomadevents

import (
	"github.com/ordoplane/ordo/events"
)

// The types of Nomad's stream ordo's entries map to. Nomad names an event
// after the raft request that made the change, so every entity one entry
// touches carries the same type.
const (
	TypeJobRegistered                 = "JobRegistered"
	TypeJobDeregistered               = "JobDeregistered"
	TypeJobBatchDeregistered          = "JobBatchDeregistered"
	TypePlanResult                    = "PlanResult"
	TypeAllocationUpdated             = "AllocationUpdated"
	TypeAllocationUpdateDesiredStatus = "AllocationUpdateDesiredStatus"
	TypeEvaluationUpdated             = "EvaluationUpdated"
	TypeDeploymentStatusUpdate        = "DeploymentStatusUpdate"
	TypeDeploymentPromotion           = "DeploymentPromotion"
	TypeNodeRegistration              = "NodeRegistration"
	TypeNodeDeregistration            = "NodeDeregistration"
	TypeNodeEligibility               = "NodeEligibility"
	TypeNodeDrain                     = "NodeDrain"
	TypeNodeEvent                     = "NodeEvent"
	TypeNodePoolUpserted              = "NodePoolUpserted"
	TypeNodePoolDeleted               = "NodePoolDeleted"
	TypeNamespaceUpserted             = "NamespaceUpserted"
	TypeNamespaceDeleted              = "NamespaceDeleted"
	TypeACLTokenUpserted              = "ACLTokenUpserted"
	TypeACLTokenDeleted               = "ACLTokenDeleted"
	TypeACLPolicyUpserted             = "ACLPolicyUpserted"
	TypeACLPolicyDeleted              = "ACLPolicyDeleted"
	TypeACLRoleUpserted               = "ACLRoleUpserted"
	TypeACLRoleDeleted                = "ACLRoleDeleted"
	// A service instance's events are named for what happened to it,
	// whatever the entry (a client's alloc update deregisters too), as
	// Nomad's are.
	TypeServiceRegistration   = "ServiceRegistration"
	TypeServiceDeregistration = "ServiceDeregistration"
)

// promotedDescription is the status description a promotion leaves on its
// deployment (commands/deployment.DescriptionPromoted).
const promotedDescription = "Deployment is running after promotion"

// entryType names the request an entry records, from the events it holds:
// the first rule below that matches wins, as the command that wrote the
// entry is known by its leading event (a job register also upserts its
// eval; a plan also updates its deployment and eval).
func entryType(entry []*events.Event, payloads []events.Payload) string {
	count := map[string]int{}
	for _, ev := range entry {
		count[ev.Type]++
	}
	switch {
	case count["JobRegistered"] > 0:
		return TypeJobRegistered
	case count["JobDeregistered"] > 1:
		return TypeJobBatchDeregistered
	case count["JobDeregistered"] > 0:
		return TypeJobDeregistered
	case count["AllocsPlaced"] > 0, count["AllocsDesiredUpdated"] > 0 && planCommit(payloads):
		return TypePlanResult
	case count["NodeRegistered"] > 0:
		return TypeNodeRegistration
	case count["NodeDeregistered"] > 0:
		return TypeNodeDeregistration
	case count["NodeDrainUpdated"] > 0:
		return TypeNodeDrain
	case count["NodeEligibilityUpdated"] > 0:
		return TypeNodeEligibility
	case count["NodeStatusUpdated"] > 0:
		return TypeNodeEvent
	case count["AllocsClientUpdated"] > 0:
		return TypeAllocationUpdated
	case count["AllocsDesiredUpdated"] > 0:
		return TypeAllocationUpdateDesiredStatus
	case count["DeploymentUpserted"] > 0, count["DeploymentStatusUpdated"] > 0:
		if promotion(payloads) {
			return TypeDeploymentPromotion
		}
		return TypeDeploymentStatusUpdate
	case count["EvalsUpserted"] > 0:
		return TypeEvaluationUpdated
	case count["NodePoolUpserted"] > 0:
		return TypeNodePoolUpserted
	case count["NodePoolDeleted"] > 0:
		return TypeNodePoolDeleted
	case count["NamespaceUpserted"] > 0:
		return TypeNamespaceUpserted
	case count["NamespaceDeleted"] > 0:
		return TypeNamespaceDeleted
	case count["ACLTokenUpserted"] > 0, count["ACLBootstrapped"] > 0:
		return TypeACLTokenUpserted
	case count["ACLTokensDeleted"] > 0:
		return TypeACLTokenDeleted
	case count["ACLPolicyUpserted"] > 0:
		return TypeACLPolicyUpserted
	case count["ACLPolicyDeleted"] > 0:
		return TypeACLPolicyDeleted
	case count["ACLRoleUpserted"] > 0:
		return TypeACLRoleUpserted
	case count["ACLRoleDeleted"] > 0:
		return TypeACLRoleDeleted
	}
	return ""
}

// planCommit reports whether an entry that stops allocations is a plan's
// commit: a plan writes back its own evaluation, no longer pending, in the
// same entry; a stop or a drain's migration creates a pending one.
func planCommit(payloads []events.Payload) bool {
	var evalID string
	for _, p := range payloads {
		if u, ok := p.(*events.AllocsDesiredUpdated); ok && u.EvalID != "" {
			evalID = u.EvalID
		}
	}
	for _, p := range payloads {
		if up, ok := p.(*events.EvalsUpserted); ok {
			for _, e := range up.Evals {
				if e.ID == evalID && e.Status != events.EvalStatusPending {
					return true
				}
			}
		}
	}
	return false
}

// promotion reports whether a deployment entry promotes canaries.
func promotion(payloads []events.Payload) bool {
	for _, p := range payloads {
		switch p := p.(type) {
		case *events.DeploymentStatusUpdated:
			if p.Promote {
				return true
			}
		case *events.DeploymentUpserted:
			if p.Deployment.StatusDescription == promotedDescription {
				return true
			}
		}
	}
	return false
}
