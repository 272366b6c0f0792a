package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// Archive is the store holding the event archive (a *kv.Store).
type Archive interface {
	kv.Reader
	Snapshot() *kv.Snapshot
}

var _ Archive = (*kv.Store)(nil)

// Config configures a Mirror.
type Config struct {
	// Settings are the agent file's mirror block; its zero fields take
	// the block's defaults (see Settings).
	Settings
	// Store holds the archive; required.
	Store Archive
	// Applied returns the applied index and a channel closed when it
	// changes (projections.Notifier.Applied); required.
	Applied func() (uint64, <-chan struct{})
	// Clock stamps lag and errors and paces retries and lingers;
	// default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the mirror's metrics; nil registers none.
	Registerer prometheus.Registerer
	// ChunkEvents bounds the events of one Kafka transaction; default 16384.
	ChunkEvents int
	// Linger paces the mirror once it is caught up: a transaction begins
	// at least Linger after the one before, so that it carries what
	// arrived meanwhile, and the mirror commits at most 1/Linger
	// transactions a second however fast the log grows (each costs the
	// leader's CPU far more than an event). An event after a quiet spell
	// longer than Linger goes at once; while behind, transactions follow
	// each other without pause. Default 20ms.
	Linger time.Duration
	// MinBackoff and MaxBackoff bound the wait before a failed session is
	// retried (doubling from Min); default 100ms and 30s.
	MinBackoff, MaxBackoff time.Duration
}

// Mirror is the leader-only processor that copies the archive to Kafka.
type Mirror struct {
	cfg     Config
	opts    []kgo.Opt
	log     *slog.Logger
	metrics *metrics

	mu struct {
		sync.Mutex
		running    bool
		partitions int32
		resume     Position
		mirrored   Position
		total      uint64 // events committed by this server
		lastErr    string
		lastErrAt  time.Time
		reachable  bool
		// inflight holds the leader time of the first event of each chunk
		// filled but not committed, oldest first.
		inflight []int64
		// baseLen, basePending and sinceBase count the lag in events: the
		// archive held baseLen events, basePending of them after the
		// resume point, when the session started; sinceBase were
		// committed since.
		baseLen, basePending, sinceBase uint64
	}
}

// DefaultConfig returns the defaults, without the required fields (the
// Settings take theirs from the agent file's defaults).
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, Logger: slog.Default(), ChunkEvents: 16384, Linger: 20 * time.Millisecond,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 30 * time.Second}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	switch {
	case c.Store == nil || c.Applied == nil:
		return errors.New("mirror: Store and Applied are required")
	case c.ChunkEvents < 0 || c.MinBackoff < 0 || c.MaxBackoff < 0:
		return errors.New("mirror: ChunkEvents, MinBackoff and MaxBackoff must not be negative")
	}
	return nil
}

// New returns a Mirror; it validates cfg and registers the metrics.
func New(cfg Config) (*Mirror, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Settings = cfg.Settings.withDefaults()
	if cfg.Settings.Linger > 0 {
		cfg.Linger = cfg.Settings.Linger
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(30*time.Second, cfg.MinBackoff)
	}
	opts, err := cfg.Settings.clientOpts()
	if err != nil {
		return nil, err
	}
	m := &Mirror{cfg: cfg, opts: opts,
		log: cfg.Logger.With("processor", "mirror", "topic", cfg.Topic)}
	m.metrics = newMetrics(m)
	if cfg.Registerer != nil {
		for _, c := range m.metrics.collectors() {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("mirror metrics: %w", err)
			}
		}
	}
	return m, nil
}

// Close unregisters the metrics.
func (m *Mirror) Close() {
	if r := m.cfg.Registerer; r != nil {
		for _, c := range m.metrics.collectors() {
			r.Unregister(c)
		}
	}
}

// Name implements supervisor.Processor.
func (m *Mirror) Name() string { return "mirror" }

// Settings returns the settings in force, defaults filled in.
func (m *Mirror) Settings() Settings { return m.cfg.Settings }

// Mirrored returns the position of the last event committed to the topic
// by this server. Everything up to it is in Kafka: an archive retention
// policy must not drop events after it.
func (m *Mirror) Mirrored() Position {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.mirrored
}

// Run mirrors until ctx ends: each session connects, fences any earlier
// producer, finds the resume point in the topic and commits the archive
// from there, one transaction per chunk; a failed session is retried
// after a backoff. Run never blocks the log: it only reads snapshots.
func (m *Mirror) Run(ctx context.Context) error {
	m.setRunning(true)
	defer m.setRunning(false)
	for failures := 0; ; {
		before := m.Mirrored()
		err := m.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			failures = 0
			continue
		}
		if m.Mirrored() != before {
			// The session committed before it failed: Kafka works, and
			// this failure is the first of a new run, waiting the least
			// (sessions that each commit a little before dying would
			// otherwise wait ever longer, up to MaxBackoff, and fall
			// behind for no reason).
			failures = 0
		}
		m.metrics.errors.Inc()
		wait := backoff(failures, m.cfg.MinBackoff, m.cfg.MaxBackoff)
		failures++
		m.setError(err)
		m.log.Warn("mirror session failed; retrying", "err", err, "backoff", wait, "failures", failures)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.cfg.Clock.After(wait):
		}
	}
}

// session runs one producer from connecting until ctx ends or an error.
func (m *Mirror) session(ctx context.Context) error {
	s := m.cfg.Settings
	cl, err := kgo.NewClient(append(m.opts[:len(m.opts):len(m.opts)],
		kgo.TransactionalID(s.TransactionalID),
		kgo.TransactionTimeout(max(m.cfg.Settings.Timeout, 10*time.Second)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(s.Topic),
		kgo.MaxBufferedRecords(2*m.cfg.ChunkEvents),
		kgo.ProducerBatchMaxBytes(s.batchMaxBytes()),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(s.codec()),
		// No record delivery timeout: records carry their leader time as
		// timestamp, which franz-go would count the timeout from. Each
		// transaction's delivery is bounded by Timeout instead.
	)...)
	if err != nil {
		return fmt.Errorf("mirror client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	step, cancel := context.WithTimeout(ctx, m.cfg.Settings.Timeout)
	defer cancel()
	// Initialising the transactional producer bumps its epoch: a deposed
	// leader's producer is fenced and its open transaction aborted before
	// the tail is read.
	if _, _, err := cl.ProducerID(step); err != nil {
		return fmt.Errorf("init transactional producer %s: %w", s.TransactionalID, err)
	}
	m.setReachable(true)
	partitions, err := ensureTopic(step, adm, s, m.cfg.Clock)
	if err != nil {
		return err
	}
	tail, err := readTail(step, m.opts, adm, s.Topic)
	if err != nil {
		return fmt.Errorf("read the topic's tail: %w", err)
	}
	cancel()
	resume := resumePoint(tail)
	if err := m.startSession(resume, partitions); err != nil {
		return err
	}
	m.log.Info("mirror session started", "resume_index", resume.Index, "resume_seq", resume.Seq,
		"partitions", partitions, "transactional_id", s.TransactionalID)

	opts := recordOptions{Topic: s.Topic, Source: s.Source, Format: s.Format, Partitions: partitions}
	return m.pipeline(ctx, cl, resume, opts)
}

// pipeline fills chunks from the archive on one goroutine and commits them
// on another, in order, so building the next transaction overlaps
// delivering this one. Two chunks circulate: free → filled → committed →
// free.
func (m *Mirror) pipeline(ctx context.Context, cl *kgo.Client, resume Position, opts recordOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan *chunk, 2)
	free <- &chunk{}
	free <- &chunk{}
	ready := make(chan *chunk, 1)
	fillErr := make(chan error, 1)
	go func() {
		fillErr <- m.filler(ctx, resume, opts, free, ready)
	}()
	var err error
	for err == nil {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case err = <-fillErr:
			fillErr <- err
			if err == nil {
				err = ctx.Err()
			}
		case c := <-ready:
			if err = m.commit(ctx, cl, c); err == nil {
				free <- c
			}
		}
	}
	cancel()
	ferr := <-fillErr
	if errors.Is(err, context.Canceled) {
		err = ferr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// filler builds chunks of the events after resume, in log order, and hands
// them to ready. When caught up it waits for the log to grow, and paces
// the chunks by time (Config.Linger): one chunk a Linger at most, carrying
// what arrived meanwhile.
func (m *Mirror) filler(ctx context.Context, resume Position, opts recordOptions, free <-chan *chunk, ready chan<- *chunk) error {
	cursor := resume
	var (
		last   time.Time // when the last chunk was read
		behind bool      // the last chunk was full: more is waiting
	)
	for {
		var c *chunk
		select {
		case <-ctx.Done():
			return nil
		case c = <-free:
		}
		for {
			_, wake := m.cfg.Applied()
			if wait := m.cfg.Linger - m.cfg.Clock.Now().Sub(last); !behind && wait > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-m.cfg.Clock.After(wait):
				}
			}
			start := m.cfg.Clock.Now()
			if err := m.fill(c, cursor, opts); err != nil {
				return err
			}
			if len(c.recs) > 0 {
				last, behind = start, len(c.recs) >= m.cfg.ChunkEvents
				break
			}
			select {
			case <-ctx.Done():
				return nil
			case <-wake:
			}
		}
		cursor = c.last
		select {
		case <-ctx.Done():
			return nil
		case ready <- c:
		}
	}
}

// chunk is one transaction's records and the buffers they live in.
type chunk struct {
	b     []*builder // one a lane
	recs  []kgo.Record
	raw   []byte   // the archived events' bytes, back to back
	ends  []int    // raw[ends[i-1]:ends[i]] is event i
	last  Position // the last event's position
	first int64    // leader time of the first event
}

// maxLanes bounds how many goroutines build a large chunk's records: one
// a core, up to it.
const maxLanes = 8

// fill reads up to ChunkEvents events after cursor from a snapshot of the
// archive and builds their records into c, on a goroutine a core (up to
// maxLanes) when the chunk is large.
func (m *Mirror) fill(c *chunk, cursor Position, o recordOptions) error {
	c.recs, c.raw, c.ends = c.recs[:0], c.raw[:0], c.ends[:0]
	snap := m.cfg.Store.Snapshot()
	limit := m.cfg.ChunkEvents
	err := archive.Scan(snap, cursor.Index, 0, func(index uint64, seq uint32, data []byte) error {
		if p := (Position{index, seq}); !cursor.Less(p) {
			return nil
		}
		if len(c.ends) >= limit {
			return kv.ErrStop
		}
		c.raw = append(c.raw, data...)
		c.ends = append(c.ends, len(c.raw))
		c.last = Position{index, seq}
		return nil
	})
	snap.Close()
	if err != nil || len(c.ends) == 0 {
		return err
	}
	n := len(c.ends)
	c.recs = slices.Grow(c.recs, n)[:n]
	lanes := 1
	if n >= 1024 {
		lanes = min(runtime.GOMAXPROCS(0), maxLanes)
	}
	for len(c.b) < lanes {
		c.b = append(c.b, new(builder))
	}
	if lanes == 1 {
		err = c.build(0, 1, o)
	} else {
		errs := make([]error, lanes)
		var wg sync.WaitGroup
		for l := range lanes {
			wg.Go(func() { errs[l] = c.build(l, lanes, o) })
		}
		wg.Wait()
		err = errors.Join(errs...)
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.mu.inflight = append(m.mu.inflight, c.first)
	m.mu.Unlock()
	return nil
}

// build builds the records of lane l of lanes: its share of the chunk's
// events, straight from their bytes, or decoded when the fast path
// leaves one to the general way.
func (c *chunk) build(l, lanes int, o recordOptions) error {
	b := c.b[l]
	b.reset()
	n := len(c.ends)
	for i := l * n / lanes; i < (l+1)*n/lanes; i++ {
		start := 0
		if i > 0 {
			start = c.ends[i-1]
		}
		data := c.raw[start:c.ends[i]]
		c.recs[i] = kgo.Record{}
		at, ok := b.buildRaw(data, o, &c.recs[i])
		if !ok {
			ev, err := events.DecodeEvent(data)
			if err != nil {
				return fmt.Errorf("mirror: archived event %d of chunk ending %s: %w", i, c.last, err)
			}
			if err := b.build(ev, o, &c.recs[i]); err != nil {
				return err
			}
			at = ev.Time
		}
		if i == 0 {
			c.first = at
		}
	}
	return nil
}

// commit produces c's records in one transaction and commits it.
func (m *Mirror) commit(ctx context.Context, cl *kgo.Client, c *chunk) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	var (
		mu      sync.Mutex
		failure error
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if failure == nil {
				failure = fmt.Errorf("produce %s/%d: %w", header(r, HeaderSequence), r.Partition, err)
			}
			mu.Unlock()
		}
	}
	step, cancel := context.WithTimeout(ctx, m.cfg.Settings.Timeout)
	defer cancel()
	for i := range c.recs {
		cl.Produce(step, &c.recs[i], promise)
	}
	err := cl.Flush(step)
	mu.Lock()
	if err == nil {
		err = failure
	}
	mu.Unlock()
	if err != nil {
		// The transaction is aborted by the next session's fencing if
		// this abort cannot reach the coordinator.
		abort, cancelAbort := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = cl.EndTransaction(abort, kgo.TryAbort)
		cancelAbort()
		return fmt.Errorf("deliver events %s..%s: %w", firstPos(c), c.last, err)
	}
	if err := cl.EndTransaction(step, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit events %s..%s: %w", firstPos(c), c.last, err)
	}
	now := m.cfg.Clock.Now()
	m.metrics.mirrored.Add(float64(len(c.recs)))
	m.metrics.lastIndex.Set(float64(c.last.Index))
	m.metrics.commitLag.Observe(max(0, now.Sub(time.Unix(0, c.first)).Seconds()))
	m.mu.Lock()
	m.mu.mirrored = c.last
	m.mu.total += uint64(len(c.recs))
	m.mu.sinceBase += uint64(len(c.recs))
	if len(m.mu.inflight) > 0 {
		m.mu.inflight = m.mu.inflight[1:]
	}
	m.mu.reachable = true
	m.mu.Unlock()
	m.log.Debug("mirror committed", "from", firstPos(c).String(), "to", c.last.String(), "events", len(c.recs))
	return nil
}

func firstPos(c *chunk) Position {
	if len(c.recs) == 0 {
		return c.last
	}
	p, _ := recordPosition(&c.recs[0])
	return p
}

// startSession records the session's resume point and the archive's
// counts the lag is measured from.
func (m *Mirror) startSession(resume Position, partitions int32) error {
	snap := m.cfg.Store.Snapshot()
	defer snap.Close()
	length, pending, err := pendingAfter(snap, resume)
	if err != nil {
		return fmt.Errorf("count events after the resume point: %w", err)
	}
	m.metrics.resumeIndex.Set(float64(resume.Index))
	m.metrics.lastIndex.Set(float64(resume.Index))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.resume, m.mu.mirrored, m.mu.partitions = resume, resume, partitions
	m.mu.baseLen, m.mu.basePending, m.mu.sinceBase = length, pending, 0
	m.mu.inflight = nil
	return nil
}

// pendingAfter returns how many events r's archive holds and how many of
// them come after resume. It counts on whichever side of resume spans
// fewer indexes: a cold start, or a resume near the end of the log (a
// restart, a failover), counts next to nothing, where counting the whole
// log would cost a catch-up from cold a sixth of its time.
func pendingAfter(r kv.Reader, resume Position) (length, pending uint64, err error) {
	if length, err = archive.Len(r); err != nil {
		return 0, 0, err
	}
	first, err := archive.First(r)
	if err != nil {
		return 0, 0, err
	}
	last, err := archive.Last(r)
	if err != nil {
		return 0, 0, err
	}
	if length == 0 || resume.Index < first {
		return length, length, nil
	}
	var n uint64
	if resume.Index-first < last-min(last, resume.Index) {
		err = archive.Scan(r, first, resume.Index, func(index uint64, seq uint32, _ []byte) error {
			if !resume.Less(Position{index, seq}) {
				n++
			}
			return nil
		})
		return length, length - min(n, length), err
	}
	err = archive.Scan(r, resume.Index, 0, func(index uint64, seq uint32, _ []byte) error {
		if resume.Less(Position{index, seq}) {
			n++
		}
		return nil
	})
	return length, n, err
}

func (m *Mirror) setRunning(v bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.running = v
	m.mu.inflight = nil
}

func (m *Mirror) setReachable(v bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.reachable = v
}

func (m *Mirror) setError(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.lastErr = err.Error()
	m.mu.lastErrAt = m.cfg.Clock.Now()
	m.mu.reachable = false
	m.mu.inflight = nil
}

// lagEvents counts the archived events not yet committed to the topic;
// 0 when this server is not mirroring.
func (m *Mirror) lagEvents() uint64 {
	m.mu.Lock()
	running, base, pending, since := m.mu.running, m.mu.baseLen, m.mu.basePending, m.mu.sinceBase
	m.mu.Unlock()
	if !running {
		return 0
	}
	n, err := archive.Len(m.cfg.Store)
	if err != nil || n < base {
		return 0
	}
	if lag := n - base + pending; lag > since {
		return lag - since
	}
	return 0
}

// lagSeconds is the age of the oldest event not yet committed; 0 when
// caught up or not mirroring.
func (m *Mirror) lagSeconds() float64 {
	m.mu.Lock()
	running := m.mu.running
	var oldest int64
	if len(m.mu.inflight) > 0 {
		oldest = m.mu.inflight[0]
	}
	m.mu.Unlock()
	if !running {
		return 0
	}
	if oldest == 0 {
		if m.lagEvents() == 0 {
			return 0
		}
		// Behind, but nothing read yet (a session is starting or
		// retrying): the oldest waiting event is the one after the
		// last mirrored.
		oldest = m.nextEventTime()
		if oldest == 0 {
			return 0
		}
	}
	return max(0, m.cfg.Clock.Now().Sub(time.Unix(0, oldest)).Seconds())
}

// nextEventTime returns the leader time of the first archived event after
// the mirrored position, 0 if none.
func (m *Mirror) nextEventTime() int64 {
	pos := m.Mirrored()
	var t int64
	_ = archive.Scan(m.cfg.Store, pos.Index, 0, func(index uint64, seq uint32, data []byte) error {
		if !pos.Less(Position{index, seq}) {
			return nil
		}
		if ev, err := events.DecodeEvent(data); err == nil {
			t = ev.Time
		}
		return kv.ErrStop
	})
	return t
}
