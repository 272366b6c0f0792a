// Command mirror-consumer is an example consumer of ordo's Kafka mirror
// for analytics pipelines to start from: it joins a consumer group,
// reads the topic with isolation level read_committed (only records of
// committed mirror transactions), skips any event it has already seen by
// its (index, seq) position, and writes one JSON line per event to stdout
// or a file.
//
// Usage:
//
//	go run ./tools/mirror-consumer -brokers kafka-1:9092 -topic ordo.events -group analytics
//	go run ./tools/mirror-consumer -brokers 127.0.0.1:9092 -from-start -out events.jsonl
//
// # Resuming
//
// The group's committed offsets are where a restarted consumer resumes:
// offsets are committed (synchronously, after the lines are written and
// flushed) every -commit-every records and on exit, so a crash of this
// consumer replays at most the records since its last commit, and a
// rebalance may hand a partition over with records another member already
// wrote. Within one run those replays are the duplicates the (index, seq)
// check drops: per partition it remembers the greatest position written
// and skips records at or before it. Positions increase within a
// partition (the mirror's guarantee), so one position per partition is
// all the state a consumer needs. One that must write no duplicate even
// across its own crashes stores that per-partition position in the same
// transaction as its output (a database row per partition, say), seeds
// it on start, and resumes from its own positions rather than the group's
// offsets.
//
// Line format: the record value as the mirror wrote it (JSON), or, for a
// msgpack topic, the value decoded and re-encoded as JSON.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/vmihailenco/msgpack/v5"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "seed brokers, comma-separated")
	topic := flag.String("topic", "ordo.events", "the mirror's topic")
	group := flag.String("group", "ordo-mirror-consumer", "consumer group")
	out := flag.String("out", "", "append JSON lines to this file (default stdout)")
	fromStart := flag.Bool("from-start", false, "with no committed offsets, start at the topic's beginning (default: its end)")
	commitEvery := flag.Int("commit-every", 1000, "commit offsets after this many records")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *group, *out, *fromStart, *commitEvery); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "mirror-consumer:", err)
		os.Exit(1)
	}
}

// position is an event's (index, seq), from the record's headers.
type position struct {
	index uint64
	seq   uint32
}

func (p position) after(q position) bool {
	return p.index > q.index || p.index == q.index && p.seq > q.seq
}

func run(ctx context.Context, brokers []string, topic, group, outPath string, fromStart bool, commitEvery int) error {
	w := io.Writer(os.Stdout)
	if outPath != "" {
		f, err := os.OpenFile(outPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()

	reset := kgo.NewOffset().AtEnd()
	if fromStart {
		reset = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit())
	if err != nil {
		return err
	}
	defer cl.Close()

	// The greatest position written, per partition.
	seen := map[int32]position{}
	uncommitted := 0
	commit := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		uncommitted = 0
		return cl.CommitUncommittedOffsets(context.WithoutCancel(ctx))
	}
	defer commit()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetch %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		var werr error
		fs.EachRecord(func(r *kgo.Record) {
			if werr != nil {
				return
			}
			p, ok := recordPosition(r)
			if !ok {
				return // not the mirror's: ignore
			}
			if !p.after(seen[r.Partition]) {
				return // a replay after a rebalance: already written
			}
			seen[r.Partition] = p
			werr = writeLine(bw, r)
			uncommitted++
		})
		if werr != nil {
			return werr
		}
		if uncommitted >= commitEvery {
			if err := commit(); err != nil {
				return fmt.Errorf("commit offsets: %w", err)
			}
		}
	}
}

// recordPosition reads ordo-index and ordo-seq.
func recordPosition(r *kgo.Record) (position, bool) {
	var p position
	var hi, hs bool
	for _, h := range r.Headers {
		switch h.Key {
		case "ordo-index":
			v, err := strconv.ParseUint(string(h.Value), 10, 64)
			p.index, hi = v, err == nil
		case "ordo-seq":
			v, err := strconv.ParseUint(string(h.Value), 10, 32)
			p.seq, hs = uint32(v), err == nil
		}
	}
	return p, hi && hs
}

// writeLine writes the record's value as one JSON line.
func writeLine(w *bufio.Writer, r *kgo.Record) error {
	value := r.Value
	for _, h := range r.Headers {
		if h.Key == "content-type" && string(h.Value) == "application/msgpack" {
			var v map[string]any
			if err := msgpack.Unmarshal(r.Value, &v); err != nil {
				return fmt.Errorf("record %d/%d: %w", r.Partition, r.Offset, err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			value = b
		}
	}
	if _, err := w.Write(value); err != nil {
		return err
	}
	return w.WriteByte('\n')
}
