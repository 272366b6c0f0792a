package mirror

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Position is an event's place in the log: the raft index it committed at
// and its sequence within that entry. Positions order the archive.
type Position struct {
	Index uint64 `json:"Index"`
	Seq   uint32 `json:"Seq"`
}

// Less reports whether p comes before q in the log.
func (p Position) Less(q Position) bool {
	return p.Index < q.Index || p.Index == q.Index && p.Seq < q.Seq
}

// IsZero reports the zero position, before every event.
func (p Position) IsZero() bool { return p == Position{} }

// String renders p as the ce_sequence header does: the index zero-padded to
// 20 digits, a dash, the sequence zero-padded to 10, so that positions sort
// as strings exactly as they sort as numbers.
func (p Position) String() string { return string(p.appendSequence(nil)) }

func (p Position) appendSequence(b []byte) []byte {
	return events.AppendPosition(b, p.Index, p.Seq, '-')
}

// ParseSequence parses a ce_sequence value written by String.
func ParseSequence(s string) (Position, error) {
	idx, seq, ok := strings.Cut(s, "-")
	if !ok || len(idx) != 20 || len(seq) != 10 {
		return Position{}, fmt.Errorf("mirror: sequence %q is not 20 digits, a dash and 10 digits", s)
	}
	i, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("mirror: sequence %q: %w", s, err)
	}
	q, err := strconv.ParseUint(seq, 10, 32)
	if err != nil {
		return Position{}, fmt.Errorf("mirror: sequence %q: %w", s, err)
	}
	return Position{Index: i, Seq: uint32(q)}, nil
}
