package capacity

import (
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// MaxEvals bounds the evals one request names.
const MaxEvals = 100

// FileRequest creates a node request of one label for a node pool and
// records the blocked evals it is for.
type FileRequest struct {
	Pool, Label, Requestor, Tenant string
	// Evals are the blocked evals counted; more than MaxEvals are cut.
	Evals []string
	// Placements and Supply are what the processor counted.
	Placements, Supply int

	create lcmd.CreateRequest
}

var _ commands.Command = (*FileRequest)(nil)

// ID returns the id of the request the last Decide minted.
func (f *FileRequest) ID() string { return f.create.ID() }

// Validate implements commands.Command.
func (f *FileRequest) Validate() error {
	if f.Pool == "" {
		return commands.Invalid("Pool", "must not be empty")
	}
	c := f.request()
	return c.Validate()
}

func (f *FileRequest) request() lcmd.CreateRequest {
	return lcmd.CreateRequest{Labels: []string{f.Label}, Requestor: f.Requestor, Tenant: f.Tenant}
}

// Decide implements commands.Command.
func (f *FileRequest) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	f.create = f.request()
	d, err := f.create.Decide(v, now, ids)
	if err != nil {
		return d, err
	}
	evals := f.Evals
	if len(evals) > MaxEvals {
		evals = evals[:MaxEvals]
	}
	d.Events = append(d.Events, &events.CapacityRequested{RequestID: f.create.ID(), Pool: f.Pool, Label: f.Label,
		Evals: evals, Placements: f.Placements, Supply: f.Supply})
	return d, nil
}
