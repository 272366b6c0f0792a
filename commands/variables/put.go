package variables

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pv "github.com/ordoplane/ordo/projections/variables"
)

// Put creates or replaces the variable at Path in Namespace with items
// already sealed by Seal.
type Put struct {
	Namespace string
	Path      string
	// CAS, when set, is the modify index the variable must have: 0 means it
	// must not exist. A mismatch is a *commands.ConflictError (see
	// IsCASConflict), decided again at apply.
	CAS *uint64
	// KeyID and Data are Seal's output.
	KeyID string
	Data  []byte
}

var _ commands.Answered = Put{}

// AnswerRows implements commands.Answered: a put is answered with the
// variable as its own entry wrote it.
func (p Put) AnswerRows() []fsm.RowRef {
	return []fsm.RowRef{{Table: pv.Table, Key: pv.Key(p.Namespace, p.Path)}}
}

// MarshalJSON is what the pipeline digests to tell an idempotent retry
// from another request: the target and the CAS index, not the ciphertext,
// which differs on every encryption of the same items (and whose digest
// has no business in the log).
func (p Put) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Namespace, Path string
		CAS             *uint64
	}{p.Namespace, p.Path, p.CAS})
}

// Validate implements commands.Command.
func (p Put) Validate() error {
	if err := namespace.ValidName("namespace", p.Namespace); err != nil {
		return err
	}
	if err := ValidPath("Path", p.Path); err != nil {
		return err
	}
	if p.KeyID == "" || len(p.Data) == 0 {
		return commands.Invalid("Items", "the items were not encrypted")
	}
	if len(p.Data) > MaxDataBytes {
		return commands.Invalid("Items", "%d encrypted bytes exceeds %d", len(p.Data), MaxDataBytes)
	}
	return nil
}

// Decide implements commands.Command.
func (p Put) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	pre, err := namespaceExists(v, p.Namespace)
	if err != nil {
		return commands.Decision{}, err
	}
	if p.CAS != nil {
		c, err := casPrecondition(v, p.Namespace, p.Path, *p.CAS)
		if err != nil {
			return commands.Decision{}, err
		}
		pre = append(pre, c)
	}
	size := int64(len(p.Data))
	quota := pv.QuotaPrecondition(p.Namespace, p.Path, size)
	if err := pv.CheckQuota(v, p.Namespace, p.Path, size); err != nil {
		var qe *pv.QuotaError
		if errors.As(err, &qe) {
			return commands.Decision{}, &commands.ConflictError{Precondition: quota, Reason: qe.Error()}
		}
		return commands.Decision{}, err
	}
	pre = append(pre, quota)
	return commands.Decision{
		Events:        []events.Payload{&events.VariableUpserted{Namespace: p.Namespace, Path: p.Path, KeyID: p.KeyID, Data: p.Data}},
		Preconditions: pre,
	}, nil
}

// namespaceExists refuses a namespace that does not exist and returns the
// precondition that it still does at apply (the default namespace always
// does).
func namespaceExists(v projections.View, ns string) ([]events.Precondition, error) {
	if ns == namespaces.Default {
		return nil, nil
	}
	if _, err := namespaces.Get(v, ns); errors.Is(err, projections.ErrNotFound) {
		return nil, commands.Invalid("namespace", "namespace %q does not exist", ns)
	} else if err != nil {
		return nil, err
	}
	return []events.Precondition{{Table: namespaces.Table, Key: ns, Op: events.Exists}}, nil
}

// casPrecondition checks the variable's modify index against cas now and
// returns the precondition that checks it again at apply.
func casPrecondition(v projections.View, ns, path string, cas uint64) (events.Precondition, error) {
	c := events.Precondition{Table: pv.Table, Key: pv.Key(ns, path), Op: events.ModifyIndex, Index: cas}
	var have uint64
	cur, err := pv.Get(v, ns, path)
	switch {
	case err == nil:
		have = cur.ModifyIndex
	case !errors.Is(err, projections.ErrNotFound):
		return c, err
	}
	if have != cas {
		return c, &commands.ConflictError{Precondition: c, Reason: casReason(have, cas)}
	}
	return c, nil
}

func casReason(have, want uint64) string {
	if have == 0 {
		return "the variable does not exist (cas " + utoa(want) + ")"
	}
	if want == 0 {
		return "the variable already exists at modify index " + utoa(have) + " (cas 0)"
	}
	return "modify index is " + utoa(have) + ", not " + utoa(want)
}

// IsCASConflict reports whether err is a check-and-set mismatch of a
// variable, decided at decide or at apply; the API answers it with the
// current variable.
func IsCASConflict(err error) bool {
	var ce *commands.ConflictError
	return errors.As(err, &ce) && ce.Precondition.Table == pv.Table && ce.Precondition.Op == events.ModifyIndex
}
