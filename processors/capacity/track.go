package capacity

import (
	"fmt"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver/local"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// tracker is what the processor follows, so that a pass reads rows of
// its own things only: the non-terminal evals, the nodes linked to an
// instance, and the requests and instances of its pools. It is restored
// from the projections once, then follows the archive.
type tracker struct {
	// evals are the pending and blocked evals, by id.
	evals map[string]*events.Evaluation
	// nodeOf maps an instance id to the node that registered on it.
	nodeOf map[string]string
	// requests and instances map this processor's requests and
	// instances (requestor "capacity:<pool>") to their pool.
	requests  map[string]string
	instances map[string]string
}

func newTracker() *tracker {
	return &tracker{evals: map[string]*events.Evaluation{}, nodeOf: map[string]string{},
		requests: map[string]string{}, instances: map[string]string{}}
}

// poolOf returns the pool a requestor names, or "".
func poolOf(requestor string) string {
	if p, ok := strings.CutPrefix(requestor, RequestorPrefix); ok {
		return p
	}
	return ""
}

// restore reads the state at v.
func (t *tracker) restore(v projections.View) error {
	err := evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
		t.eval(e.Evaluation)
		return nil
	})
	if err != nil {
		return fmt.Errorf("capacity: restore evals: %w", err)
	}
	err = nodes.Scan(v, nodes.Query{}, func(n *nodes.Node) error {
		if id := n.Meta[local.InstanceMetaKey]; id != "" {
			t.nodeOf[id] = n.ID
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("capacity: restore nodes: %w", err)
	}
	err = launcher.ScanRequests(v, "", "", func(r *launcher.Request) error {
		if p := poolOf(r.Requestor); p != "" {
			t.requests[r.ID] = p
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("capacity: restore requests: %w", err)
	}
	err = launcher.ScanInstances(v, "", "", func(in *launcher.Instance) error {
		if p := poolOf(in.Requestor); p != "" {
			t.instances[in.ID] = p
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("capacity: restore instances: %w", err)
	}
	return nil
}

func (t *tracker) eval(e events.Evaluation) {
	if e.Status == events.EvalStatusPending || e.Status == events.EvalStatusBlocked {
		t.evals[e.ID] = &e
		return
	}
	delete(t.evals, e.ID)
}

// follow applies the archived events from..to.
func (t *tracker) follow(r kv.Reader, from, to uint64) error {
	return archive.Scan(r, from, to, func(index uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("capacity: decode event at %d: %w", index, err)
		}
		switch ev.Type {
		case "EvalsUpserted", "EvalsDeleted", "EvalsPageDeleted", "NodeRegistered", "NodeDeregistered",
			"NodeRequestCreated", "NodeRequestDeleted", "InstanceCreated", "InstanceAssigned", "InstanceDeleted":
		default:
			return nil
		}
		p, err := events.Decode(ev)
		if err != nil {
			return fmt.Errorf("capacity: decode %s at %d: %w", ev.Type, index, err)
		}
		t.apply(p)
		return nil
	})
}

func (t *tracker) apply(p events.Payload) {
	switch p := p.(type) {
	case *events.EvalsUpserted:
		for _, e := range p.Evals {
			t.eval(e)
		}
	case *events.EvalsDeleted:
		for _, id := range p.IDs {
			delete(t.evals, id)
		}
	case *events.EvalsPageDeleted:
		for _, id := range p.IDs {
			delete(t.evals, id)
		}
	case *events.NodeRegistered:
		if id := p.Node.Meta[local.InstanceMetaKey]; id != "" {
			t.nodeOf[id] = p.Node.ID
		}
	case *events.NodeDeregistered:
		for inst, node := range t.nodeOf {
			if node == p.ID {
				delete(t.nodeOf, inst)
			}
		}
	case *events.NodeRequestCreated:
		if pool := poolOf(p.Request.Requestor); pool != "" {
			t.requests[p.Request.ID] = pool
		}
	case *events.NodeRequestDeleted:
		delete(t.requests, p.ID)
	case *events.InstanceCreated:
		if pool := poolOf(p.Instance.Requestor); pool != "" {
			t.instances[p.Instance.ID] = pool
		}
	case *events.InstanceAssigned:
		if pool := poolOf(p.Requestor); pool != "" {
			t.instances[p.ID] = pool
		} else {
			delete(t.instances, p.ID) // reused by another requestor (P3)
		}
	case *events.InstanceDeleted:
		delete(t.instances, p.ID)
	}
}
