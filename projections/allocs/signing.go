package allocs

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The signing key index (N5): which live allocations a root key signed.
const (
	// BySigningKeyTable indexes live (non-terminal) allocs by
	// "<signing key id>\x00<alloc id>".
	BySigningKeyTable = "allocs_live_by_signing_key"
	// SigningKeyLiveTable holds, per signing key id, how many live allocs
	// it signed; the row is absent at zero. Its modify index moves whenever
	// the count does, so the keyring GC's delete carries it as a
	// precondition and loses any race with a plan placing an allocation
	// signed by the key.
	SigningKeyLiveTable = "alloc_signing_key_live"
)

// SigningKeyPrefix returns the BySigningKeyTable prefix of a key's allocs.
func SigningKeyPrefix(keyID string) string { return keyID + "\x00" }

// adjustSigning moves the live signing index from old (before) to a
// (after), counting in the event's tally t; either may be nil, and
// terminal allocs are not indexed.
func adjustSigning(tx *projections.Tx, t *tally, old, a *events.Allocation) error {
	oldKey, newKey := liveSigningKey(old), liveSigningKey(a)
	if oldKey == newKey {
		return nil
	}
	if oldKey != "" {
		if _, err := tx.Delete(BySigningKeyTable, SigningKeyPrefix(oldKey)+old.ID); err != nil {
			return err
		}
		if err := t.addSigned(tx, oldKey, -1); err != nil { // tally.go
			return err
		}
	}
	if newKey != "" {
		if err := tx.PutIndex(BySigningKeyTable, SigningKeyPrefix(newKey)+a.ID); err != nil {
			return err
		}
		return t.addSigned(tx, newKey, 1)
	}
	return nil
}

func liveSigningKey(a *events.Allocation) string {
	if a == nil || a.Terminal() {
		return ""
	}
	return a.SigningKeyID
}

// LiveSignedBy returns how many live allocs keyID signed and the modify
// index of that count (0 when none).
func LiveSignedBy(v projections.View, keyID string) (n int, index uint64, err error) {
	r, err := v.Get(SigningKeyLiveTable, keyID)
	if errors.Is(err, projections.ErrNotFound) {
		return 0, 0, nil
	} else if err != nil {
		return 0, 0, err
	}
	if err := msgpack.Unmarshal(r.Value, &n); err != nil {
		return 0, 0, fmt.Errorf("decode signing count of %s: %w", keyID, err)
	}
	return n, r.ModifyIndex, nil
}

// LiveBySigningKey returns the ids of the live allocs keyID signed, sorted.
func LiveBySigningKey(v projections.View, keyID string) ([]string, error) {
	var out []string
	p := SigningKeyPrefix(keyID)
	err := v.Scan(BySigningKeyTable, p, false, func(k string, _ projections.Row) error {
		out = append(out, k[len(p):])
		return nil
	})
	return out, err
}
