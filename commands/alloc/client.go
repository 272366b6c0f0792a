package alloc

import (
	"errors"
	"fmt"
	"time"
	"unicode"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// MaxClientUpdates is the most allocation updates one client call carries.
const MaxClientUpdates = 1024

// MaxID is the longest alloc id accepted, in bytes.
const MaxID = 128

// ClientUpdate is a client reporting what became of allocations on its
// node: Nomad's Node.UpdateAlloc.
type ClientUpdate struct {
	NodeID string
	Allocs []events.AllocClientUpdate
}

var _ commands.Command = ClientUpdate{}

// ValidID reports whether id may name an allocation, as a
// *commands.ValidationError naming field.
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

// Validate implements commands.Command. A client reports pending,
// running, complete or failed; lost and unknown are the servers' to decide.
func (c ClientUpdate) Validate() error {
	if err := node.ValidID("NodeID", c.NodeID); err != nil {
		return err
	}
	if len(c.Allocs) > MaxClientUpdates {
		return commands.Invalid("Allocs", "%d updates exceed %d", len(c.Allocs), MaxClientUpdates)
	}
	seen := make(map[string]bool, len(c.Allocs))
	for i, u := range c.Allocs {
		field := fmt.Sprintf("Allocs[%d]", i)
		if err := ValidID(field+".ID", u.ID); err != nil {
			return err
		}
		if seen[u.ID] {
			return commands.Invalid(field+".ID", "allocation %q is updated twice", u.ID)
		}
		seen[u.ID] = true
		switch u.ClientStatus {
		case events.AllocClientPending, events.AllocClientRunning, events.AllocClientComplete, events.AllocClientFailed:
		default:
			return commands.Invalid(field+".ClientStatus", "%q is not one of pending, running, complete, failed", u.ClientStatus)
		}
		for name, s := range u.TaskStates {
			if name == "" || s == nil {
				return commands.Invalid(field+".TaskStates", "every task state needs a task name and a value")
			}
		}
	}
	return nil
}

// Decide implements commands.Command: every alloc must exist and be on the
// node; the node must exist.
func (c ClientUpdate) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	if _, err := nodes.Get(v, c.NodeID); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "node", ID: c.NodeID}
	} else if err != nil {
		return commands.Decision{}, err
	}
	pre := []events.Precondition{{Table: nodes.Table, Key: c.NodeID, Op: events.Exists}}
	failedJobs := map[[2]string]bool{}
	var failedOrder [][2]string
	var stopped []string // newly client-terminal: their services go in this entry
	for i, u := range c.Allocs {
		a, err := lookup(v, u.ID)
		var nf *commands.NotFoundError
		switch {
		case errors.As(err, &nf):
			return commands.Decision{}, commands.Invalid(fmt.Sprintf("Allocs[%d].ID", i), "allocation %q does not exist", u.ID)
		case err != nil:
			return commands.Decision{}, err
		case a.NodeID != c.NodeID:
			return commands.Decision{}, commands.Invalid(fmt.Sprintf("Allocs[%d].ID", i), "allocation %q is not on node %q", u.ID, c.NodeID)
		}
		if (&events.Allocation{ClientStatus: u.ClientStatus}).ClientTerminal() {
			stopped = append(stopped, u.ID)
		}
		// A newly failed allocation may need rescheduling.
		if u.ClientStatus == events.AllocClientFailed && a.ClientStatus != events.AllocClientFailed && !a.ServerTerminal() {
			k := [2]string{a.Namespace, a.JobID}
			if !failedJobs[k] {
				failedJobs[k] = true
				failedOrder = append(failedOrder, k)
			}
		}
	}
	var evs []events.Payload
	if len(c.Allocs) > 0 {
		evs = append(evs, &events.AllocsClientUpdated{NodeID: c.NodeID, Updates: c.Allocs})
	}
	if dereg, err := services.ForAllocs(v, services.ReasonAllocTerminal, stopped...); err != nil {
		return commands.Decision{}, err
	} else if dereg != nil {
		evs = append(evs, dereg)
	}
	evs = append(evs, &events.NodeAllocsUpdated{ID: c.NodeID})
	if retry := failureEvals(v, failedOrder, now, ids); len(retry) > 0 {
		evs = append(evs, &events.EvalsUpserted{Evals: retry})
	}
	return commands.Decision{Events: evs, Preconditions: pre}, nil
}

// failureEvals returns a pending eval (alloc-failure) for each job, so the
// scheduler applies its reschedule policy.
func failureEvals(v projections.View, keys [][2]string, now time.Time, ids commands.IDs) []events.Evaluation {
	var out []events.Evaluation
	for _, k := range keys {
		j, err := jobs.Get(v, k[0], k[1])
		if err != nil || j.Stop {
			continue
		}
		out = append(out, events.Evaluation{ID: ids(), Namespace: j.Namespace, Priority: j.Priority, Type: j.Type,
			TriggeredBy: events.EvalTriggerRetryFailedAlloc, JobID: j.ID, Status: events.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()})
	}
	return out
}
