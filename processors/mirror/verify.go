package mirror

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// TopicRecord is one record read back from the topic.
type TopicRecord struct {
	Partition int32
	Offset    int64
	Key       string
	Position  Position
	// ID is the ce_id header: the event's id.
	ID      string
	Value   []byte
	Headers map[string]string
}

// ReadTopic reads every committed record of the topic the settings name,
// partition by partition in offset order, and calls fn with each. It is
// what a read-committed consumer sees at the moment it is called.
func ReadTopic(ctx context.Context, s Settings, fn func(TopicRecord) error) (partitions int32, err error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	s = s.withDefaults()
	opts, err := s.clientOpts()
	if err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, fmt.Errorf("mirror: client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, s.Topic)
	if err != nil {
		return 0, fmt.Errorf("mirror: list topic %s: %w", s.Topic, err)
	}
	d, ok := topics[s.Topic]
	if !ok || d.Err != nil {
		return 0, fmt.Errorf("mirror: topic %s: not found (%v)", s.Topic, d.Err)
	}
	ranges, err := committedRanges(ctx, adm, s.Topic)
	if err != nil {
		return 0, err
	}
	err = readCommitted(ctx, opts, s.Topic, ranges, func(r *kgo.Record) error {
		pos, err := recordPosition(r)
		if err != nil {
			return err
		}
		tr := TopicRecord{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Position: pos,
			ID: header(r, HeaderID), Value: r.Value, Headers: make(map[string]string, len(r.Headers))}
		for _, h := range r.Headers {
			tr.Headers[h.Key] = string(h.Value)
		}
		return fn(tr)
	})
	return int32(len(d.Partitions)), err
}

// Report is what Verify found.
type Report struct {
	Topic      string
	Partitions int32
	// Records is how many committed records the topic holds; Checked how
	// many archived events (from From through Through) were looked for.
	Records int
	Checked int
	// From is the first index checked; Through the greatest position in
	// the topic: events after it are not mirrored yet (Pending).
	From    uint64
	Through Position
	Pending int
	// Missing are archived events up to Through that the topic lacks;
	// Duplicates records of an event already seen; OutOfOrder records
	// that come before an earlier record of their partition;
	// WrongPartition records not in their key's partition; Unknown
	// records of no archived event; Mismatched records whose key or id
	// differs from the event's. Each lists at most 20 examples; the
	// counts are exact.
	Missing        Finding
	Duplicates     Finding
	OutOfOrder     Finding
	WrongPartition Finding
	Unknown        Finding
	Mismatched     Finding
	// OK reports no finding at all.
	OK      bool
	Elapsed time.Duration
}

// Finding counts one kind of problem and keeps a few examples.
type Finding struct {
	Count    int
	Examples []string `json:",omitempty"`
}

func (f *Finding) add(format string, args ...any) {
	f.Count++
	if len(f.Examples) < 20 {
		f.Examples = append(f.Examples, fmt.Sprintf(format, args...))
	}
}

// VerifyOptions bound what Verify checks.
type VerifyOptions struct {
	// From is the first raft index checked; earlier records are ignored
	// and earlier events not required (for topics whose retention dropped
	// the start). Default 1.
	From uint64
}

// Verify reads the topic back and checks it against the archive in r:
// every archived event up to the greatest position in the topic is there
// exactly once, in its key's partition, with its key and id, and each
// partition (so each entity) holds its events in log order.
func Verify(ctx context.Context, s Settings, r kv.Reader, o VerifyOptions) (Report, error) {
	start := time.Now()
	s = s.withDefaults()
	rep := Report{Topic: s.Topic, From: max(o.From, 1)}
	// Per partition, the records in offset order (only what the merge needs).
	type seen struct {
		pos     Position
		key, id string
		offset  int64
	}
	parts := map[int32][]seen{}
	last := map[int32]Position{}
	all := map[Position]int32{}
	n, err := ReadTopic(ctx, s, func(tr TopicRecord) error {
		rep.Records++
		if tr.Position.Index < rep.From {
			return nil
		}
		if prev, ok := all[tr.Position]; ok {
			rep.Duplicates.add("%s at partition %d offset %d (first in partition %d)", tr.Position, tr.Partition, tr.Offset, prev)
			return nil
		}
		all[tr.Position] = tr.Partition
		if l, ok := last[tr.Partition]; ok && !l.Less(tr.Position) {
			rep.OutOfOrder.add("%s at partition %d offset %d after %s", tr.Position, tr.Partition, tr.Offset, l)
		} else {
			last[tr.Partition] = tr.Position
		}
		if rep.Through.Less(tr.Position) {
			rep.Through = tr.Position
		}
		parts[tr.Partition] = append(parts[tr.Partition], seen{tr.Position, tr.Key, tr.ID, tr.Offset})
		return nil
	})
	if err != nil {
		return rep, err
	}
	rep.Partitions = n
	for p, list := range parts {
		kept := list[:0]
		for _, sr := range list {
			if want := Partition([]byte(sr.key), n); want != p {
				rep.WrongPartition.add("%s key %q at partition %d offset %d, belongs in %d", sr.pos, sr.key, p, sr.offset, want)
				continue
			}
			kept = append(kept, sr)
		}
		// Order by position for the merge; out-of-order records were reported above.
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].pos.Less(kept[j].pos) })
		parts[p] = kept
	}
	next := map[int32]int{}
	err = archive.Scan(r, rep.From, 0, func(index uint64, seq uint32, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		pos := Position{index, seq}
		if rep.Through.Less(pos) {
			rep.Pending++
			return nil
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archived event %s: %w", pos, err)
		}
		rep.Checked++
		key := RecordKey(ev)
		p := Partition([]byte(key), n)
		list := parts[p]
		i := next[p]
		for i < len(list) && list[i].pos.Less(pos) {
			rep.Unknown.add("%s at partition %d offset %d is no archived event", list[i].pos, p, list[i].offset)
			i++
		}
		if i < len(list) && list[i].pos == pos {
			if list[i].key != key || list[i].id != ev.ID {
				rep.Mismatched.add("%s: record key %q id %q, event key %q id %q", pos, list[i].key, list[i].id, key, ev.ID)
			}
			i++
		} else {
			rep.Missing.add("%s (%s, key %q, partition %d)", pos, ev.Type, key, p)
		}
		next[p] = i
		return nil
	})
	if err != nil {
		return rep, err
	}
	for p, list := range parts {
		for _, sr := range list[next[p]:] {
			rep.Unknown.add("%s at partition %d offset %d is no archived event", sr.pos, p, sr.offset)
		}
	}
	rep.OK = rep.Missing.Count+rep.Duplicates.Count+rep.OutOfOrder.Count+rep.WrongPartition.Count+
		rep.Unknown.Count+rep.Mismatched.Count == 0
	rep.Elapsed = time.Since(start)
	return rep, nil
}
