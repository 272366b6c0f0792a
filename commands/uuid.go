package commands

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewUUID mints a random id in the shape of Nomad's ids (36 characters,
// 8-4-4-4-12 hex digits), laid out as a version 7 UUID (RFC 9562): its
// first 48 bits are the Unix time in milliseconds, so ids minted later
// sort after earlier ones, which the evals table's range scans rely on
// (projections/evals removePage). It is the pipeline's default IDs; the
// scheduler derives the ids of what it places in the same shape
// (scheduler.DeriveID), so every eval, allocation and deployment id looks
// alike.
func NewUUID() string {
	return uuidAt(time.Now(), rand.Read)
}

// uuidAt mints a version 7 UUID for time t with random bits from read.
func uuidAt(t time.Time, read func([]byte) (int, error)) string {
	var b [16]byte
	if _, err := read(b[6:]); err != nil {
		panic("commands: no randomness: " + err.Error()) // crypto/rand.Read does not fail
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0f | 0x70 // version 7
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	s := hex.EncodeToString(b[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}
