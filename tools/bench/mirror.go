package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// mirrorEvents is the archive the catch-up figure mirrors from cold.
const mirrorEvents = 1_000_000

// mirrorRows measures the Kafka mirror against kfake (in-process, over
// loopback TCP): the catch-up rate from a cold start over an archive of
// events archived events; the end-to-end lag (leader time to a
// read-committed consumer) under a steady rate writes/s on one server;
// and that server's write throughput with and without the mirror.
func mirrorRows(events, rate, clients int, d time.Duration) ([]row, error) {
	catchUp, err := mirrorCatchUp(events)
	if err != nil {
		return nil, err
	}
	rows := []row{{fmt.Sprintf("mirror catch-up from cold, %d archived events", events), catchUp, "events/s"}}
	without, with, err := mirrorWritePair(clients, d)
	if err != nil {
		return nil, err
	}
	rows = append(rows,
		row{fmt.Sprintf("acked commands without HTTP, 1 server, %d clients, no mirror", clients), without.rate, "commands/s"},
		row{fmt.Sprintf("acked commands without HTTP, 1 server, %d clients, mirror on", clients), with.rate, "commands/s"})
	lag, err := mirrorLag(rate, d)
	if err != nil {
		return nil, err
	}
	return append(rows, lag...), nil
}

// mirrorWritePair is the acked command rate of clients writers for d
// without, then with the mirror.
func mirrorWritePair(clients int, d time.Duration) (without, with writeRun, err error) {
	if without, err = mirrorWrites(false, clients, d); err != nil {
		return writeRun{}, writeRun{}, err
	}
	with, err = mirrorWrites(true, clients, d)
	return without, with, err
}

// writeRun is one run of mirrorWrites: acked commands/s, and this
// process's CPU per acked command (the server's, and with the mirror on
// the mirror's and kfake's too), which the others' load on the machine
// moves far less than the rate.
type writeRun struct{ rate, cpuPer float64 }

// mirrorWriteRows measures what the mirror costs the writers: pairs runs
// without then with the mirror, alternating, each of clients writers for
// d; the rows are the median rate of each and the cost in percent of the
// rate without, and the median CPU per command of each and the share of
// the CPU the mirror adds (what it would take off writers bound by CPU).
func mirrorWriteRows(pairs, clients int, d time.Duration) ([]row, error) {
	var off, on, cpuOff, cpuOn []float64
	for i := range pairs {
		without, with, err := mirrorWritePair(clients, d)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "bench: mirror writes, pair %d: %.0f/s off, %.0f/s on; %.1f CPU µs per command off, %.1f on\n",
			i+1, without.rate, with.rate, without.cpuPer, with.cpuPer)
		off, on = append(off, without.rate), append(on, with.rate)
		cpuOff, cpuOn = append(cpuOff, without.cpuPer), append(cpuOn, with.cpuPer)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	mOff, mOn, cOff, cOn := median(off), median(on), median(cpuOff), median(cpuOn)
	return []row{
		{fmt.Sprintf("acked commands without HTTP, 1 server, %d clients, no mirror (median of %d)", clients, pairs), mOff, "commands/s"},
		{fmt.Sprintf("acked commands without HTTP, 1 server, %d clients, mirror on (median of %d)", clients, pairs), mOn, "commands/s"},
		{"mirror cost to the writers (medians)", 100 * (mOff - mOn) / mOff, "%"},
		{"CPU per acked command, no mirror (median)", cOff, "CPU µs"},
		{"CPU per acked command, mirror on (median)", cOn, "CPU µs"},
		{"CPU the mirror adds per command (medians)", 100 * (cOn - cOff) / cOff, "%"},
	}, nil
}

// notifier is a fixed applied index: the catch-up archive does not grow.
func notifier(index uint64) func() (uint64, <-chan struct{}) {
	never := make(chan struct{})
	return func() (uint64, <-chan struct{}) { return index, never }
}

// mirrorCatchUp archives n namespace events and mirrors them from a cold
// start with the default compression: events/s (mirrorArchive, catchUp).
func mirrorCatchUp(n int) (float64, error) {
	store, done, err := mirrorArchive(n)
	if err != nil {
		return 0, err
	}
	defer done()
	r, err := catchUp(store, n, "")
	return r.rate, err
}

// mirrorCatchUpRows is the catch-up figure alone, from cold runs times
// over the same archive: the median run's rate with the slowest and the
// fastest, and the median CPU per event, for profiling and comparing
// builds on a noisy machine.
func mirrorCatchUpRows(n, runs int) ([]row, error) {
	store, done, err := mirrorArchive(n)
	if err != nil {
		return nil, err
	}
	defer done()
	var rates, cpus []float64
	for i := range runs {
		r, err := catchUp(store, n, "")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "bench: mirror catch-up %d: %.0f events/s, %.2f CPU µs per event\n", i+1, r.rate, r.cpuPer100k*10)
		rates, cpus = append(rates, r.rate), append(cpus, r.cpuPer100k*10)
	}
	slices.Sort(rates)
	slices.Sort(cpus)
	return []row{
		{fmt.Sprintf("mirror catch-up from cold, %d archived events (median of %d)", n, runs), rates[runs/2], "events/s"},
		{"mirror catch-up, slowest run", rates[0], "events/s"},
		{"mirror catch-up, fastest run", rates[runs-1], "events/s"},
		{"mirror catch-up CPU, default compression (mirror and kfake, median)", cpus[runs/2], "CPU µs per event"},
	}, nil
}

// mirrorArchive archives n namespace events (one per entry, over 10,000
// names) in a temp store, removed by done.
func mirrorArchive(n int) (store *kv.Store, done func(), err error) {
	dir, err := os.MkdirTemp("", "ordo-bench-mirror-")
	if err != nil {
		return nil, nil, err
	}
	store, err = kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	done = func() { store.Close(); os.RemoveAll(dir) }
	w := store.Batch()
	defer func() { w.Close() }()
	now := time.Now().UnixNano()
	for i := uint64(1); i <= uint64(n); i++ {
		e := events.Entry{Time: now, CommandID: fmt.Sprint("cmd-", i), Actor: "bench"}
		ev, err := events.New(fmt.Sprint("ev-", i), &events.NamespaceUpserted{Namespace: events.Namespace{
			Name: fmt.Sprint("ns-", i%10_000), Description: "benchmark", Meta: map[string]string{"i": fmt.Sprint(i)}}})
		if err != nil {
			done()
			return nil, nil, err
		}
		e.Events = []events.Event{ev}
		e.Stamp(i)
		data, err := events.EncodeEvent(&e.Events[0])
		if err == nil {
			err = archive.Append(w, i, 0, data)
		}
		if err == nil && (i%10_000 == 0 || i == uint64(n)) {
			if err = archive.SetCounters(w, i, i); err == nil {
				err = w.Commit()
			}
			w = store.Batch()
		}
		if err != nil {
			done()
			return nil, nil, err
		}
	}
	return store, done, nil
}

// catchUpResult is one cold catch-up: events/s over the whole run
// (connecting and reading the empty topic included), this process's CPU
// seconds per 100,000 events (the mirror's and kfake's: both run here),
// and the record batches' bytes on the topic.
type catchUpResult struct {
	rate, cpuPer100k float64
	topicBytes       int64
}

// catchUp mirrors the n events of store into a fresh kfake broker with
// the given compression ("" for the default).
func catchUp(store *kv.Store, n int, compression string) (catchUpResult, error) {
	k, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return catchUpResult{}, err
	}
	defer k.Close()
	m, err := mirror.New(mirror.Config{Settings: mirror.Settings{Brokers: k.ListenAddrs(), Topic: "bench", Partitions: 6, Compression: compression},
		Store: store, Applied: notifier(uint64(n)), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return catchUpResult{}, err
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start, cpu0 := time.Now(), cpuTime()
	go func() { done <- m.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Minute)
	for m.Mirrored().Index < uint64(n) {
		if time.Now().After(deadline) {
			cancel()
			return catchUpResult{}, fmt.Errorf("mirror catch-up: %d of %d after 5m", m.Mirrored().Index, n)
		}
		time.Sleep(time.Millisecond)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	cancel()
	<-done
	size, err := topicBytes(k.ListenAddrs(), "bench")
	return catchUpResult{rate: float64(n) / el.Seconds(), cpuPer100k: cpu.Seconds() * 100_000 / float64(n), topicBytes: size}, err
}

// mirrorCodecRows mirrors the same archive of n events once per codec:
// the catch-up rate, its CPU and the bytes on the topic, the figures the
// mirror's default compression is chosen by (docs/mirror.md).
func mirrorCodecRows(n int) ([]row, error) {
	store, done, err := mirrorArchive(n)
	if err != nil {
		return nil, err
	}
	defer done()
	var rows []row
	for _, c := range []string{mirror.CompressionNone, mirror.CompressionGzip, mirror.CompressionSnappy, mirror.CompressionLZ4, mirror.CompressionZstd} {
		r, err := catchUp(store, n, c)
		if err != nil {
			return nil, fmt.Errorf("compression %s: %w", c, err)
		}
		rows = append(rows,
			row{fmt.Sprintf("mirror catch-up, %d events, compression %s", n, c), r.rate, "events/s"},
			row{fmt.Sprintf("mirror catch-up CPU, compression %s (mirror and kfake)", c), r.cpuPer100k, "CPU s per 100k events"},
			row{fmt.Sprintf("mirror topic size, compression %s", c), float64(r.topicBytes) / float64(n), "bytes/event"})
	}
	return rows, nil
}

// topicBytes sums the record batches of every partition of topic, as a
// consumer fetches them (compressed).
func topicBytes(addrs []string, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return 0, err
	}
	id := md.Topics[topic].ID
	var total int64
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		for from := int64(0); from < o.Offset && ferr == nil; {
			req := kmsg.NewPtrFetchRequest()
			req.MaxBytes, req.MaxWaitMillis = 32<<20, 10
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic, ft.TopicID = topic, id
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = o.Partition, from, 32<<20
			ft.Partitions = append(ft.Partitions, fp)
			req.Topics = append(req.Topics, ft)
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				ferr = err
				return
			}
			raw := resp.Topics[0].Partitions[0].RecordBatches
			if len(raw) == 0 {
				ferr = fmt.Errorf("topic %s partition %d: nothing fetched at offset %d of %d", topic, o.Partition, from, o.Offset)
				return
			}
			for len(raw) >= 12 {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(raw); err != nil {
					break // a batch cut short by the fetch's size limit
				}
				total += 12 + int64(b.Length)
				from = b.FirstOffset + int64(b.LastOffsetDelta) + 1
				raw = raw[12+int(b.Length):]
			}
		}
	})
	return total, ferr
}

// mirrorAgent starts one server in a temp dir, mirroring to k when k is set.
func mirrorAgent(dir string, k *kfake.Cluster) (*agent.Agent, error) {
	cfg := agent.DefaultConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.HTTP.MaxConnsPerClient = -1 // load generators and simulated fleets all connect from 127.0.0.1
	cfg.BootstrapExpect = 1
	cfg.RaftTimeout = 500 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	cfg.NoSync = os.Getenv("ORDO_BENCH_NOSYNC") != ""
	if k != nil {
		cfg.Mirror = &mirror.Settings{Brokers: k.ListenAddrs(), Topic: "bench", Partitions: 6}
	}
	a, err := agent.Start(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := waitLeader([]*agent.Agent{a}); err != nil {
		a.Shutdown()
		return nil, err
	}
	return a, nil
}

// mirrorWrites is the acked command rate of clients writers on one server
// for d, with or without a mirror, and the CPU per command.
func mirrorWrites(withMirror bool, clients int, d time.Duration) (writeRun, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-mirror-")
	if err != nil {
		return writeRun{}, err
	}
	defer os.RemoveAll(dir)
	var k *kfake.Cluster
	if withMirror {
		if k, err = kfake.NewCluster(kfake.NumBrokers(1)); err != nil {
			return writeRun{}, err
		}
		defer k.Close()
	}
	a, err := mirrorAgent(dir, k)
	if err != nil {
		return writeRun{}, err
	}
	defer a.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var acked atomic.Int64
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuTime()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				cmd := namespace.Apply{Name: fmt.Sprintf("mw-%d-%d", c, n)}
				if _, err := a.Pipeline().Run(context.Background(), "namespace.apply", commands.Request{}, cmd); err == nil {
					acked.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	n := float64(acked.Load())
	return writeRun{rate: n / time.Since(start).Seconds(), cpuPer: float64((cpuTime() - cpu0).Microseconds()) / max(n, 1)}, nil
}

// mirrorLag writes rate commands/s for d on one server with a mirror and
// measures, for every event, the time from its leader time to a
// read-committed consumer receiving it.
func mirrorLag(rate int, d time.Duration) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-mirror-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	k, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, err
	}
	defer k.Close()
	a, err := mirrorAgent(dir, k)
	if err != nil {
		return nil, err
	}
	defer a.Shutdown()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.ListenAddrs()...), kgo.ConsumeTopics("bench"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	var (
		mu   sync.Mutex
		lags []time.Duration
	)
	consumeCtx, stopConsumer := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for consumeCtx.Err() == nil {
			fs := cl.PollFetches(consumeCtx)
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				for _, h := range r.Headers {
					if h.Key == mirror.HeaderTime {
						if t, err := time.Parse(time.RFC3339Nano, string(h.Value)); err == nil {
							mu.Lock()
							lags = append(lags, now.Sub(t))
							mu.Unlock()
						}
					}
				}
			})
		}
	}()

	// Writers paced to rate in total: each of 64 sends every 64/rate s.
	const writers = 64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var acked atomic.Int64
	interval := time.Duration(float64(time.Second) * writers / float64(rate))
	start := time.Now()
	paced(ctx, writers, interval, func(c, n int) { // cluster.go
		cmd := namespace.Apply{Name: fmt.Sprintf("ml-%d-%d", c, n)}
		if _, err := a.Pipeline().Run(context.Background(), "namespace.apply", commands.Request{}, cmd); err == nil {
			acked.Add(1)
		}
	})
	achieved := float64(acked.Load()) / time.Since(start).Seconds()
	// Let the last events arrive, then stop the consumer.
	deadline := time.Now().Add(30 * time.Second)
	for a.Mirror().Status(context.Background()).LagEvents > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	stopConsumer()
	<-consumed
	mu.Lock()
	defer mu.Unlock()
	if len(lags) == 0 {
		return nil, fmt.Errorf("mirror lag: the consumer received nothing")
	}
	slices.Sort(lags)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []row{
		{fmt.Sprintf("mirror steady writes, target %d/s, 1 server", rate), achieved, "commands/s"},
		{"mirror lag p50 (leader time to read-committed consumer)", ms(percentile(lags, 0.50)), "ms"},
		{"mirror lag p99 (leader time to read-committed consumer)", ms(percentile(lags, 0.99)), "ms"},
		{"mirror lag max", ms(lags[len(lags)-1]), "ms"},
	}, nil
}

// growingLog is an archive that grows as the FSM grows it, with the
// FSM's notifier: one namespace event per entry.
type growingLog struct {
	store *kv.Store
	mu    sync.Mutex
	index uint64
	ch    chan struct{}
}

func (g *growingLog) applied() (uint64, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.index, g.ch
}

// append archives n entries of one event each.
func (g *growingLog) append(n int) error {
	g.mu.Lock()
	index := g.index
	g.mu.Unlock()
	w := g.store.Batch()
	defer w.Close()
	now := time.Now().UnixNano()
	for range n {
		index++
		e := events.Entry{Time: now, CommandID: fmt.Sprint("cmd-", index), Actor: "bench"}
		ev, err := events.New(fmt.Sprint("ev-", index), &events.NamespaceUpserted{Namespace: events.Namespace{
			Name: fmt.Sprint("ns-", index%10_000), Description: "benchmark", Meta: map[string]string{"i": fmt.Sprint(index)}}})
		if err != nil {
			return err
		}
		e.Events = []events.Event{ev}
		e.Stamp(index)
		data, err := events.EncodeEvent(&e.Events[0])
		if err == nil {
			err = archive.Append(w, index, 0, data)
		}
		if err != nil {
			return err
		}
	}
	if err := archive.SetCounters(w, index, index); err != nil {
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	g.mu.Lock()
	g.index = index
	close(g.ch)
	g.ch = make(chan struct{})
	g.mu.Unlock()
	return nil
}

// mirrorSteadyRows measures the mirror's own CPU per event while it keeps
// up with a log growing at rate events/s (one event an entry, committed
// each millisecond, as writes apply), the mirror and kfake alone in the
// process: runs pairs of d, the log growing without a mirror, then with
// one; the difference of their CPU per event is the mirror's (kfake's
// included: it runs here), the figure the cost to the writers follows.
func mirrorSteadyRows(rate int, d time.Duration, pairs int) ([]row, error) {
	var costs []float64
	for i := range pairs {
		var cpu [2]float64
		for j, withMirror := range []bool{false, true} {
			c, err := mirrorSteady(rate, d, withMirror)
			if err != nil {
				return nil, err
			}
			cpu[j] = c
		}
		fmt.Fprintf(os.Stderr, "bench: mirror steady %d events/s, pair %d: %.2f CPU µs per event without, %.2f with\n", rate, i+1, cpu[0], cpu[1])
		costs = append(costs, cpu[1]-cpu[0])
	}
	slices.Sort(costs)
	return []row{{fmt.Sprintf("mirror CPU per event keeping up with %d events/s (mirror and kfake, median of %d)", rate, pairs),
		costs[len(costs)/2], "CPU µs"}}, nil
}

// mirrorSteady grows a fresh log at rate events/s for d, with or without
// a mirror, and returns the process's CPU per event.
func mirrorSteady(rate int, d time.Duration, withMirror bool) (float64, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-mirror-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return 0, err
	}
	defer store.Close()
	g := &growingLog{store: store, ch: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var m *mirror.Mirror
	if withMirror {
		k, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return 0, err
		}
		defer k.Close()
		m, err = mirror.New(mirror.Config{Settings: mirror.Settings{Brokers: k.ListenAddrs(), Topic: "bench", Partitions: 6},
			Store: store, Applied: g.applied, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return 0, err
		}
		defer m.Close()
		go func() { done <- m.Run(ctx) }()
		// The session is up once the first event is mirrored.
		if err := g.append(1); err != nil {
			return 0, err
		}
		for deadline := time.Now().Add(30 * time.Second); m.Mirrored().Index < 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("mirror steady: no session after 30s")
			}
		}
	} else {
		close(done)
	}
	start, cpu0 := time.Now(), cpuTime()
	var appended int
	for tick := start; time.Since(start) < d; {
		tick = tick.Add(time.Millisecond)
		time.Sleep(time.Until(tick))
		n := int(time.Since(start).Seconds()*float64(rate)) - appended
		if n > 0 {
			if err := g.append(n); err != nil {
				return 0, err
			}
			appended += n
		}
	}
	if withMirror {
		g.mu.Lock()
		last := g.index
		g.mu.Unlock()
		for deadline := time.Now().Add(30 * time.Second); m.Mirrored().Index < last; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("mirror steady: %d of %d after 30s", m.Mirrored().Index, last)
			}
		}
	}
	cpu := cpuTime() - cpu0
	cancel()
	<-done
	return float64(cpu.Microseconds()) / float64(appended), nil
}
