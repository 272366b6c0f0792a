package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/clock"
)

// ensureTopic returns how many partitions topic has, creating it with the
// settings' partitions and replication factor when it does not exist.
func ensureTopic(ctx context.Context, adm *kadm.Client, s Settings, clk clock.Clock) (int32, error) {
	for attempt := 0; ; attempt++ {
		topics, err := adm.ListTopics(ctx, s.Topic)
		if err != nil {
			return 0, fmt.Errorf("list topic %s: %w", s.Topic, err)
		}
		d, ok := topics[s.Topic]
		switch {
		case ok && d.Err == nil && len(d.Partitions) > 0:
			return int32(len(d.Partitions)), nil
		case ok && d.Err != nil && !errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			return 0, fmt.Errorf("topic %s: %w", s.Topic, d.Err)
		case attempt > 0:
			// Created but the metadata lags; ask again shortly.
			if attempt > 50 {
				return 0, fmt.Errorf("topic %s: created but not listed", s.Topic)
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-clk.After(20 * time.Millisecond):
			}
			continue
		}
		resp, err := adm.CreateTopic(ctx, s.Partitions, s.ReplicationFactor, nil, s.Topic)
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return 0, fmt.Errorf("create topic %s: %w", s.Topic, err)
		}
		if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return 0, fmt.Errorf("create topic %s: %w", s.Topic, resp.Err)
		}
		if err == nil && resp.Err == nil && resp.NumPartitions > 0 {
			return resp.NumPartitions, nil
		}
	}
}

// offsetRange is a half-open range of offsets of one partition.
type offsetRange struct{ from, to int64 }

// committedRanges returns, per partition of topic, the offsets from the log
// start to the last stable offset: what a read-committed consumer can read.
func committedRanges(ctx context.Context, adm *kadm.Client, topic string) (map[int32]offsetRange, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32]offsetRange{}
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("partition %d end offset: %w", o.Partition, o.Err))
			return
		}
		r := offsetRange{to: o.Offset}
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			if s.Err != nil {
				errs = append(errs, fmt.Errorf("partition %d start offset: %w", o.Partition, s.Err))
				return
			}
			r.from = s.Offset
		}
		out[o.Partition] = r
	})
	return out, errors.Join(errs...)
}

// readCommitted calls fn, partition by partition in offset order, for every
// committed record of topic within ranges. Control records (transaction
// markers) are not passed to fn but tell where a partition's range ends:
// a partition is done once a record at its range's last offset is seen.
func readCommitted(ctx context.Context, opts []kgo.Opt, topic string, ranges map[int32]offsetRange, fn func(*kgo.Record) error) error {
	parts := map[int32]kgo.Offset{}
	for p, r := range ranges {
		if r.from < r.to {
			parts[p] = kgo.NewOffset().At(r.from)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(opts[:len(opts):len(opts)],
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.FetchMaxWait(200*time.Millisecond),
		// A one-off reader needs no fetch session (and closing a client
		// with one mid-fetch races inside franz-go v1.22.3).
		kgo.DisableFetchSessions())...)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()
	left := len(parts)
	done := map[int32]bool{}
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read %s: %w", topic, err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("read %s partition %d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var cbErr error
		fs.EachRecord(func(r *kgo.Record) {
			rg := ranges[r.Partition]
			if cbErr != nil || done[r.Partition] || r.Offset >= rg.to {
				return
			}
			if !r.Attrs.IsControl() {
				cbErr = fn(r)
			}
			if r.Offset == rg.to-1 {
				done[r.Partition] = true
				left--
			}
		})
		if cbErr != nil {
			return cbErr
		}
	}
	return nil
}

// readTail returns the position of the last committed record of each
// partition of topic that holds one. It looks back from each partition's
// end in growing windows until it finds a committed data record or
// reaches the partition's start (aborted transactions and markers are
// skipped).
func readTail(ctx context.Context, opts []kgo.Opt, adm *kadm.Client, topic string) (map[int32]Position, error) {
	ranges, err := committedRanges(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]Position{}
	for p, r := range ranges {
		for back := int64(64); ; back *= 16 {
			from := max(r.from, r.to-back)
			var last *Position
			err := readCommitted(ctx, opts, topic, map[int32]offsetRange{p: {from, r.to}}, func(rec *kgo.Record) error {
				pos, err := recordPosition(rec)
				if err != nil {
					return err
				}
				last = &pos
				return nil
			})
			if err != nil {
				return nil, err
			}
			if last != nil {
				out[p] = *last
				break
			}
			if from == r.from {
				break
			}
		}
	}
	return out, nil
}

// resumePoint is where mirroring resumes: the greatest position in any
// partition. Every chunk of events is one Kafka transaction and chunks
// commit in log order, so what a read-committed reader sees is a prefix of
// the log: every event up to the greatest committed position is there,
// in every partition.
func resumePoint(tail map[int32]Position) Position {
	var p Position
	for _, q := range tail {
		if p.Less(q) {
			p = q
		}
	}
	return p
}
