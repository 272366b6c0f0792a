package commands

import (
	"crypto/rand"
	"encoding/hex"
)

// NewUUID mints a random id in the shape of Nomad's ids: a version 4 UUID
// (RFC 9562), 36 characters of 8-4-4-4-12 hex digits. It is random from
// its first character, so the 8-character short ids the CLI shows tell
// ids apart (a time-ordered layout would share its leading characters for
// a minute). It is the pipeline's default IDs; the scheduler derives the
// ids of what it places in the same shape (scheduler.DeriveID), so every
// eval, allocation and deployment id looks alike.
func NewUUID() string {
	return uuidFrom(rand.Read)
}

// uuidFrom mints a version 4 UUID from the random bits read gives.
func uuidFrom(read func([]byte) (int, error)) string {
	var b [16]byte
	if _, err := read(b[:]); err != nil {
		panic("commands: no randomness: " + err.Error()) // crypto/rand.Read does not fail
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	s := hex.EncodeToString(b[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}
