package keyring

import (
	"crypto/ed25519"
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/variables"
	"github.com/ordoplane/ordo/storage/keystore"
)

// Rotate records a new root key as the active one and demotes the
// previous active key: to inactive, or to rekeying with Full (N12), which
// makes the rekey job re-encrypt its variables. The key's material must
// already be in the leader's keystore (Keyring.Rotate writes it first).
type Rotate struct {
	// KeyID and CreateTime describe the new key.
	KeyID      string
	CreateTime int64
	// PublicKey is the key's Ed25519 identity public key.
	PublicKey []byte
	// Full re-encrypts every variable with the new key.
	Full bool
	// IfNone makes the command a no-op when a key is already active (the
	// first key, created when a cluster first elects a leader).
	IfNone bool
}

var _ commands.Command = Rotate{}

// Validate implements commands.Command.
func (c Rotate) Validate() error {
	if !keystore.ValidID(c.KeyID) {
		return commands.Invalid("KeyID", "%q is not a valid key id", c.KeyID)
	}
	if c.CreateTime <= 0 {
		return commands.Invalid("CreateTime", "required")
	}
	if len(c.PublicKey) != ed25519.PublicKeySize {
		return commands.Invalid("PublicKey", "%d bytes, want %d", len(c.PublicKey), ed25519.PublicKeySize)
	}
	return nil
}

// Decide implements commands.Command.
func (c Rotate) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	prev, err := keyring.Active(v)
	if err != nil && !errors.Is(err, keyring.ErrNoActiveKey) {
		return commands.Decision{}, err
	}
	if c.IfNone && prev != nil {
		return commands.Decision{}, nil
	}
	d := commands.Decision{
		Events: []events.Payload{&events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: c.KeyID,
			Algorithm: events.RootKeyAlgorithm, State: events.RootKeyActive, CreateTime: c.CreateTime,
			PublishTime: now.UnixNano(), PublicKey: c.PublicKey}}},
		Preconditions: []events.Precondition{{Table: keyring.Table, Key: c.KeyID, Op: events.Absent}},
	}
	if prev != nil {
		meta := prev.RootKeyMeta
		meta.State = events.RootKeyInactive
		if c.Full {
			meta.State = events.RootKeyRekeying
		}
		d.Events = append(d.Events, &events.RootKeyUpserted{Key: meta})
		// Two rotations racing: the second finds the active key changed.
		d.Preconditions = append(d.Preconditions, events.Precondition{
			Table: keyring.Table, Key: prev.KeyID, Op: events.ModifyIndex, Index: prev.ModifyIndex})
	}
	return d, nil
}

// SetState changes a key's state; the rekey job marks a rekeyed key
// inactive with it. The active key's state cannot be changed (rotate).
type SetState struct {
	KeyID string
	State string
	// ModifyIndex, when set, is the key row's modify index the caller saw.
	ModifyIndex uint64
}

var _ commands.Command = SetState{}

// Validate implements commands.Command.
func (c SetState) Validate() error {
	if !keystore.ValidID(c.KeyID) {
		return commands.Invalid("KeyID", "%q is not a valid key id", c.KeyID)
	}
	switch c.State {
	case events.RootKeyInactive, events.RootKeyRekeying, events.RootKeyDeprecated:
	default:
		return commands.Invalid("State", "%q is not inactive, rekeying or deprecated", c.State)
	}
	return nil
}

// Decide implements commands.Command.
func (c SetState) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	k, err := getKey(v, c.KeyID)
	if err != nil {
		return commands.Decision{}, err
	}
	if k.Active() {
		return commands.Decision{}, &commands.ConflictError{Reason: "key " + c.KeyID + " is the active key; rotate instead"}
	}
	if k.State == c.State {
		return commands.Decision{}, nil
	}
	meta := k.RootKeyMeta
	meta.State = c.State
	idx := c.ModifyIndex
	if idx == 0 {
		idx = k.ModifyIndex
	}
	return commands.Decision{
		Events:        []events.Payload{&events.RootKeyUpserted{Key: meta}},
		Preconditions: []events.Precondition{{Table: keyring.Table, Key: c.KeyID, Op: events.ModifyIndex, Index: idx}},
	}, nil
}

// Remove deletes a root key's metadata; every server then removes its
// keystore file. The active key, a key being rekeyed and a key that still
// encrypts variables are refused (the last also at apply).
type Remove struct {
	KeyID string
	// CollectOnly is the keyring GC's delete (N5): the key must be
	// inactive and sign no live allocation, and the allocations' signing
	// count for it is carried as a precondition, so a plan placing an
	// allocation signed by the key in between wins.
	CollectOnly bool
}

var _ commands.Command = Remove{}

// Validate implements commands.Command.
func (c Remove) Validate() error {
	if !keystore.ValidID(c.KeyID) {
		return commands.Invalid("key_id", "%q is not a valid key id", c.KeyID)
	}
	return nil
}

// Decide implements commands.Command.
func (c Remove) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	k, err := getKey(v, c.KeyID)
	if err != nil {
		return commands.Decision{}, err
	}
	switch k.State {
	case events.RootKeyActive:
		return commands.Decision{}, commands.Invalid("key_id", "%s is the active root key and cannot be removed; rotate first", c.KeyID)
	case events.RootKeyRekeying:
		return commands.Decision{}, commands.Invalid("key_id", "%s is being rekeyed (a full rotation re-encrypts its variables); remove it once it is inactive", c.KeyID)
	}
	// A key still encrypting variables stays: without it they could never
	// be read again (a full rotation re-encrypts them first).
	n, err := variables.CountUnderKey(v, c.KeyID, 0)
	if err != nil {
		return commands.Decision{}, err
	}
	if n > 0 && !c.CollectOnly {
		return commands.Decision{}, commands.Invalid("key_id", "%s still encrypts %d variables; rotate with -full to re-encrypt them first", c.KeyID, n)
	}
	d := commands.Decision{
		Events: []events.Payload{&events.RootKeyDeleted{KeyID: c.KeyID}},
		Preconditions: []events.Precondition{{Table: keyring.Table, Key: c.KeyID, Op: events.ModifyIndex, Index: k.ModifyIndex},
			variables.NoneUnderKeyPrecondition(c.KeyID)},
	}
	if c.CollectOnly {
		if k.State != events.RootKeyInactive || n > 0 {
			return commands.Decision{}, nil
		}
		n, idx, err := allocs.LiveSignedBy(v, c.KeyID)
		if err != nil {
			return commands.Decision{}, err
		}
		if n > 0 {
			return commands.Decision{}, nil
		}
		d.Preconditions = append(d.Preconditions, events.Precondition{
			Table: allocs.SigningKeyLiveTable, Key: c.KeyID, Op: events.ModifyIndex, Index: idx})
	}
	return d, nil
}

func getKey(v projections.View, id string) (*keyring.Key, error) {
	k, err := keyring.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "root key", ID: id}
	}
	return k, err
}
