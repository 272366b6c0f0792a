package history

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds one row per (entity, event).
const Table = "entity_events"

// The history's rows are read by scans of an entity's prefix only.
func init() { projections.ScanOnly(Table) }

// Kinds lists the entity kinds events carry in their Keys, sorted. A kind
// added to events is added here.
var Kinds = []string{
	events.KindAlloc, events.KindComponent, events.KindDeployment, events.KindEval, events.KindInstance, events.KindJob,
	events.KindNamespace, events.KindNode, events.KindNodeRequest, events.KindPlugin, events.KindProvider, events.KindServer,
	events.KindService, events.KindTenant, events.KindVolume,
}

// KnownKind reports whether kind is one of Kinds.
func KnownKind(kind string) bool { return slices.Contains(Kinds, kind) }

// JobID returns the history id of a job: "<namespace>/<job id>". Namespace
// names hold no slash, so the first slash splits it again.
func JobID(namespace, id string) string { return namespace + "/" + id }

// SplitJobID returns the namespace and job id of a job's history id; ok is
// false when id has no slash.
func SplitJobID(id string) (namespace, job string, ok bool) {
	return strings.Cut(id, "/")
}

// Projection maintains Table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "history" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table} }

// Apply implements projections.Projection: one index row per key of ev.
// Keys with an empty value name nothing and are skipped; a key repeated in
// one event (two allocs on one node) writes the same row twice.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	var buf [128]byte
	for _, k := range ev.Keys {
		id := entityID(ev, k)
		if k.Kind == "" || id == "" {
			continue
		}
		if err := tx.PutIndexKey(Table, appendRowKey(buf[:0], k.Kind, id, ev.Index, ev.Seq)); err != nil {
			return err
		}
	}
	return nil
}

// entityID returns the history id of the entity k names in ev.
func entityID(ev *events.Event, k events.Key) string {
	if k.Kind != events.KindJob || k.Value == "" {
		return k.Value
	}
	return JobID(ev.Key(events.KindNamespace), k.Value)
}

// EntityPrefix returns the key prefix of every row of one entity.
func EntityPrefix(kind, id string) string { return kind + "\x00" + id + "\x00" }

// appendRowKey appends the key of the row of an event at (index, seq)
// about an entity: EntityPrefix followed by the zero-padded index and
// seq.
func appendRowKey(b []byte, kind, id string, index uint64, seq uint32) []byte {
	b = append(append(append(append(b, kind...), 0), id...), 0)
	return appendPos(b, Pos{Index: index, Seq: seq})
}

// appendPos appends p as a row key's position, the index and seq
// zero-padded so that keys sort by position.
func appendPos(b []byte, p Pos) []byte { return events.AppendPosition(b, p.Index, p.Seq, 0) }

// Pos is the position of an event in the log: the raft index of its entry
// and its sequence within it.
type Pos struct {
	Index uint64
	Seq   uint32
}

// Less orders positions as the log does.
func (p Pos) Less(q Pos) bool { return p.Index < q.Index || (p.Index == q.Index && p.Seq < q.Seq) }

// String renders p as "<index>.<seq>", the form ParsePos reads.
func (p Pos) String() string { return fmt.Sprintf("%d.%d", p.Index, p.Seq) }

// ParsePos reads "<index>.<seq>".
func ParsePos(s string) (Pos, error) {
	i, q, ok := strings.Cut(s, ".")
	if !ok {
		return Pos{}, fmt.Errorf("%q is not <index>.<seq>", s)
	}
	index, err := strconv.ParseUint(i, 10, 64)
	if err != nil {
		return Pos{}, fmt.Errorf("%q is not <index>.<seq>", s)
	}
	seq, err := strconv.ParseUint(q, 10, 32)
	if err != nil {
		return Pos{}, fmt.Errorf("%q is not <index>.<seq>", s)
	}
	return Pos{Index: index, Seq: uint32(seq)}, nil
}

// parseSuffix reads the position of a row key past its entity prefix.
func parseSuffix(s string) (Pos, error) {
	i, q, ok := strings.Cut(s, "\x00")
	if !ok || len(i) != 20 || len(q) != 10 {
		return Pos{}, fmt.Errorf("history: malformed row position %q", s)
	}
	index, err := strconv.ParseUint(i, 10, 64)
	if err != nil {
		return Pos{}, fmt.Errorf("history: malformed row index %q", i)
	}
	seq, err := strconv.ParseUint(q, 10, 32)
	if err != nil {
		return Pos{}, fmt.Errorf("history: malformed row seq %q", q)
	}
	return Pos{Index: index, Seq: uint32(seq)}, nil
}
