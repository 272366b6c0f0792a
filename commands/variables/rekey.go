package variables

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	kp "github.com/ordoplane/ordo/projections/keyring"
)

// MaxRekeyPuts is the most puts one Rekey carries.
const MaxRekeyPuts = 1024

// Rekey is a batch of re-encrypting puts of a full rotation (N12), one
// entry for many variables. Every put must carry CAS, the modify index the
// variable had when it was read and re-encrypted. A put whose variable
// changed since is dropped at decide (the write that changed it sealed
// with the active key, or the next page of the rotation sees it again);
// the others' cas preconditions are checked again at apply, where one
// mismatch refuses the whole entry with a *commands.ConflictError, and the
// caller retries those puts.
//
// Each put keeps its quota precondition; a re-encryption of the same items
// has the same size, which the quota always allows.
//
// Every put must be sealed with the key KeyID, whose keyring row had
// KeyModifyIndex when the caller read it active: a rotation since refuses
// the batch (409, at decide or at apply), so a rotation never leaves
// variables re-encrypted with a key that is no longer active.
type Rekey struct {
	Puts           []Put
	KeyID          string
	KeyModifyIndex uint64
}

var _ commands.Command = Rekey{}

// Validate implements commands.Command.
func (r Rekey) Validate() error {
	if len(r.Puts) == 0 {
		return commands.Invalid("Puts", "no variable to re-encrypt")
	}
	if len(r.Puts) > MaxRekeyPuts {
		return commands.Invalid("Puts", "%d puts exceeds %d", len(r.Puts), MaxRekeyPuts)
	}
	if r.KeyID == "" {
		return commands.Invalid("KeyID", "the key the puts were sealed with is required")
	}
	seen := make(map[string]bool, len(r.Puts))
	for _, p := range r.Puts {
		if p.KeyID != r.KeyID {
			return commands.Invalid("KeyID", "%s/%s was sealed with %s, not %s", p.Namespace, p.Path, p.KeyID, r.KeyID)
		}
		if k := p.Namespace + "\x00" + p.Path; seen[k] {
			return commands.Invalid("Puts", "%s/%s appears twice", p.Namespace, p.Path)
		} else {
			seen[k] = true
		}
		if p.CAS == nil {
			return commands.Invalid("CAS", "a re-encryption of %s/%s must carry the modify index it read", p.Namespace, p.Path)
		}
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Decide implements commands.Command: the puts' events and preconditions,
// without the puts that already lost their cas and without repeating a
// precondition.
func (r Rekey) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	key := events.Precondition{Table: kp.Table, Key: r.KeyID, Op: events.ModifyIndex, Index: r.KeyModifyIndex}
	if k, err := kp.Get(v, r.KeyID); errors.Is(err, projections.ErrNotFound) || err == nil && (!k.Active() || k.ModifyIndex != r.KeyModifyIndex) {
		return commands.Decision{}, &commands.ConflictError{Precondition: key, Reason: "root key " + r.KeyID + " is no longer the active key it was"}
	} else if err != nil {
		return commands.Decision{}, err
	}
	d := commands.Decision{Preconditions: []events.Precondition{key}}
	seen := make(map[events.Precondition]bool)
	for _, p := range r.Puts {
		pd, err := p.Decide(v, now, ids)
		if IsCASConflict(err) {
			continue
		}
		if err != nil {
			return commands.Decision{}, err
		}
		d.Events = append(d.Events, pd.Events...)
		for _, c := range pd.Preconditions {
			if !seen[c] {
				seen[c] = true
				d.Preconditions = append(d.Preconditions, c)
			}
		}
	}
	if len(d.Events) == 0 {
		return commands.Decision{}, nil
	}
	return d, nil
}
