package nomadevents

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

// Ref is one entity an entry touched, as Nomad's stream names the change:
// the event to send once the entity is read.
type Ref struct {
	// Topic is the entity's kind (TopicJob, ...), Type the entry's Nomad
	// type (JobRegistered, PlanResult, ...).
	Topic, Type string
	// Key is the entity's id (a job's ID, a policy's name).
	Key string
	// Namespace is the entity's namespace when the event names it; ""
	// when the entity must say (an allocation's stop names only its id).
	Namespace string
	// Removed marks an entity the entry removed: its payload is read as it
	// stood before the entry.
	Removed bool
}

// ReadAt returns the index at which ref's entity is read for the entry
// committed at index: the entry's own, or the one before for an entity
// it removed.
func (r Ref) ReadAt(index uint64) uint64 {
	if r.Removed {
		return index - 1
	}
	return index
}

// source says which entities of an ordo event type have a Nomad event: the
// topic, the kind of the event's entity keys that name them, and whether
// the event removes them.
type source struct {
	topic, kind string
	removes     bool
}

var sources = map[string]source{
	"JobRegistered":           {TopicJob, events.KindJob, false},
	"JobDeregistered":         {TopicJob, events.KindJob, false}, // removes when Purge
	"AllocsPlaced":            {TopicAllocation, events.KindAlloc, false},
	"AllocsDesiredUpdated":    {TopicAllocation, events.KindAlloc, false},
	"AllocsClientUpdated":     {TopicAllocation, events.KindAlloc, false},
	"EvalsUpserted":           {TopicEvaluation, events.KindEval, false},
	"DeploymentUpserted":      {TopicDeployment, events.KindDeployment, false},
	"DeploymentStatusUpdated": {TopicDeployment, events.KindDeployment, false},
	"NodeRegistered":          {TopicNode, events.KindNode, false},
	"NodeStatusUpdated":       {TopicNode, events.KindNode, false},
	"NodeEligibilityUpdated":  {TopicNode, events.KindNode, false},
	"NodeDrainUpdated":        {TopicNode, events.KindNode, false},
	"NodeDeregistered":        {TopicNode, events.KindNode, true},
	"NodePoolUpserted":        {TopicNodePool, events.KindNodePool, false},
	"NodePoolDeleted":         {TopicNodePool, events.KindNodePool, true},
	"NamespaceUpserted":       {TopicNamespace, events.KindNamespace, false},
	"NamespaceDeleted":        {TopicNamespace, events.KindNamespace, true},
	"ACLTokenUpserted":        {TopicACLToken, events.KindACLToken, false},
	"ACLBootstrapped":         {TopicACLToken, events.KindACLToken, false},
	"ACLTokensDeleted":        {TopicACLToken, events.KindACLToken, true},
	"ACLPolicyUpserted":       {TopicACLPolicy, events.KindACLPolicy, false},
	"ACLPolicyDeleted":        {TopicACLPolicy, events.KindACLPolicy, true},
	"ACLRoleUpserted":         {TopicACLRole, events.KindACLRole, false},
	"ACLRoleDeleted":          {TopicACLRole, events.KindACLRole, true},
	"ServicesRegistered":      {TopicService, events.KindService, false},
	"ServicesDeregistered":    {TopicService, events.KindService, true},
}

// Mapped reports whether events of ordo type typ have Nomad events.
func Mapped(typ string) bool {
	_, ok := sources[typ]
	return ok
}

// Map returns the Nomad events of one entry: entry holds the events
// committed at one raft index, in order. An entry with none of the mapped
// types gives none. The commands of a grouped entry (events.NewGroup),
// told apart by their correlation ids, are mapped each on its own, each
// with its own type.
func Map(entry []*events.Event) ([]Ref, error) {
	var refs []Ref
	for len(entry) > 0 {
		n := 1
		for n < len(entry) && entry[n].CorrelationID == entry[0].CorrelationID {
			n++
		}
		r, err := mapCommand(entry[:n])
		if err != nil {
			return nil, err
		}
		refs = append(refs, r...)
		entry = entry[n:]
	}
	return refs, nil
}

// mapCommand returns the Nomad events of one command's events.
func mapCommand(entry []*events.Event) ([]Ref, error) {
	payloads := make([]events.Payload, len(entry))
	mapped := false
	for i, ev := range entry {
		if !Mapped(ev.Type) {
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			return nil, fmt.Errorf("map %s at index %d: %w", ev.Type, ev.Index, err)
		}
		payloads[i], mapped = p, true
	}
	if !mapped {
		return nil, nil
	}
	typ := entryType(entry, payloads)
	var refs []Ref
	seen := map[[2]string]bool{}
	for i, ev := range entry {
		src, ok := sources[ev.Type]
		if !ok {
			continue
		}
		removes := src.removes
		if d, ok := payloads[i].(*events.JobDeregistered); ok {
			removes = d.Purge
		}
		ns := ev.Key(events.KindNamespace)
		if src.topic == TopicNamespace || !Namespaced(src.topic) {
			ns = ""
		}
		for _, k := range ev.Keys {
			if k.Kind != src.kind || k.Value == "" || seen[[2]string{src.topic, k.Value}] {
				continue
			}
			seen[[2]string{src.topic, k.Value}] = true
			t := typ
			switch ev.Type {
			case "ServicesRegistered":
				t = TypeServiceRegistration
			case "ServicesDeregistered":
				t = TypeServiceDeregistration
			}
			refs = append(refs, Ref{Topic: src.topic, Type: t, Key: k.Value, Namespace: ns, Removed: removes})
		}
	}
	return refs, nil
}
