package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// IDs mints unique ids (NewUUID's on a live server).
type IDs func() string

// Decision is what a command decided: the payloads of the events to append
// and the preconditions to check at apply.
type Decision struct {
	Events        []events.Payload
	Preconditions []events.Precondition
}

// Command is one kind of write request.
type Command interface {
	// Validate checks the request alone and returns a *ValidationError.
	Validate() error
	// Decide returns the events and preconditions for the request against
	// the view at the applied index; now is the leader's time. It must not
	// do I/O besides reading v.
	Decide(v projections.View, now time.Time, ids IDs) (Decision, error)
}

// Request carries what identifies a command besides its content.
type Request struct {
	// CommandID makes retries idempotent; one is minted when empty.
	CommandID string
	// Actor names who issued the command.
	Actor string
}

// Outcome is a command's result.
type Outcome struct {
	// Index is the index the command committed at (or the applied index
	// when it decided nothing to append).
	Index uint64
	// Duplicate reports a command id that had already been applied.
	Duplicate bool
	// Time is the leader time of the entry the command committed in (Unix
	// nanoseconds); zero for a duplicate or when nothing was appended.
	Time int64
	// Rows are the rows an Answered command asked for, as its own entry
	// left them; empty for a duplicate or when nothing was appended.
	Rows []fsm.AnsweredRow
}

// Answered is a Command whose answer shows rows it writes: the pipeline
// has them read back as the command's own entry left them (Outcome.Rows),
// never re-read later, when a later write may have changed them.
type Answered interface {
	Command
	// AnswerRows names the rows the answer shows.
	AnswerRows() []fsm.RowRef
}

// Answers reads back the rows of an Answered command's entry; the FSM
// implements it.
type Answers interface {
	ExpectAnswer(commandID string, refs []fsm.RowRef) (done func())
}

// Leader tells whether this server's state may be decided and answered
// from; the raft node implements it.
type Leader interface {
	// AwaitReady returns once this server leads and has applied every
	// entry of earlier terms.
	AwaitReady(ctx context.Context) error
	// ConsistentRead returns once a quorum confirmed this server still
	// leads, through a round begun after the call.
	ConsistentRead(ctx context.Context) error
}

// Proposer appends an encoded entry and returns the FSM's result; the raft
// node implements it.
type Proposer interface {
	Append(ctx context.Context, data []byte) (any, uint64, error)
}

// Pipeline runs commands: validate, decide, propose, wait.
type Pipeline struct {
	log     Proposer
	store   *kv.Store
	applied func() uint64
	clock   clock.Clock
	ids     IDs
	leader  Leader
	answers Answers
	logger  *slog.Logger
	latency *prometheus.HistogramVec
	reg     prometheus.Registerer

	// mu guards closed; inflight counts running commands, so Close can
	// wait for them before the store under them closes.
	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
}

// PipelineConfig configures a Pipeline.
type PipelineConfig struct {
	// Log receives entries; required.
	Log Proposer
	// Store is read through snapshots to decide; required.
	Store *kv.Store
	// Applied returns the applied index; required.
	Applied func() uint64
	// Clock is the leader clock; default clock.System{}.
	Clock clock.Clock
	// IDs mints ids; default NewUUID.
	IDs IDs
	// Leader, when set, gates decisions: a command is decided only once
	// this server leads with every earlier entry applied, and an answer
	// taken from the state alone (a refusal, or nothing to append) only
	// once leadership is confirmed. Nil checks nothing (tests, replay).
	Leader Leader
	// Answers, when set, reads an Answered command's rows back at apply.
	Answers Answers
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the command latency metric; nil registers none.
	Registerer prometheus.Registerer
}

// NewPipeline returns a Pipeline.
func NewPipeline(cfg PipelineConfig) (*Pipeline, error) {
	if cfg.Log == nil || cfg.Store == nil || cfg.Applied == nil {
		return nil, errors.New("commands: Log, Store and Applied are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.IDs == nil {
		cfg.IDs = NewUUID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &Pipeline{log: cfg.Log, store: cfg.Store, applied: cfg.Applied, clock: cfg.Clock, ids: cfg.IDs,
		leader: cfg.Leader, answers: cfg.Answers, logger: cfg.Logger, reg: cfg.Registerer}
	p.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ordo_command_seconds", Help: "Time to run a command from decode to applied, by command and result.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"command", "result"})
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(p.latency)
	}
	return p, nil
}

// Close refuses new commands, waits for the running ones to return and
// unregisters the pipeline's metrics.
func (p *Pipeline) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.inflight.Wait()
	if p.reg != nil {
		p.reg.Unregister(p.latency)
	}
}

// Run validates, decides and appends c, and waits until it is applied here.
func (p *Pipeline) Run(ctx context.Context, name string, req Request, c Command) (Outcome, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Outcome{}, fmt.Errorf("%w: the server is shutting down", ErrNoLeader)
	}
	p.inflight.Add(1)
	p.mu.Unlock()
	defer p.inflight.Done()
	start := p.clock.Now()
	out, err := p.run(ctx, name, req, c)
	result := "ok"
	if err != nil {
		result = fmt.Sprint(Status(err))
	}
	p.latency.WithLabelValues(name, result).Observe(p.clock.Now().Sub(start).Seconds())
	if err != nil && Status(err) >= 500 {
		p.logger.Warn("command failed", "command", name, "command_id", req.CommandID, "err", err)
	}
	return out, err
}

func (p *Pipeline) run(ctx context.Context, name string, req Request, c Command) (Outcome, error) {
	if err := c.Validate(); err != nil {
		return Outcome{}, err
	}
	if p.leader != nil {
		if err := p.leader.AwaitReady(ctx); err != nil {
			return Outcome{}, noLeader(err)
		}
	}
	snap := p.store.Snapshot()
	d := p.decide(projections.NewView(snap), p.clock.Now().UTC(), name, req, c)
	snap.Close()
	if d.entry == nil {
		return p.answered(ctx, d)
	}
	data, err := events.EncodeEntry(d.entry)
	if err != nil {
		return Outcome{}, err
	}
	defer p.expect(d)()
	res, err := p.append(ctx, data)
	if err != nil {
		return Outcome{}, err
	}
	return outcome(res)
}

// decision is a command decided against a view: an entry to append, or an
// answer without one.
type decision struct {
	// entry is what to append; nil when the command is answered already.
	entry *events.Entry
	// answer names the rows an Answered command's answer shows.
	answer []fsm.RowRef
	// out and err answer a command with nothing to append; fromState
	// marks an answer taken from the state alone (a refusal, or nothing
	// to do), given only while this server still leads.
	out       Outcome
	err       error
	fromState bool
}

// decide decides c against v at now: a recorded result for a retried
// idempotency key, a refusal, nothing to do, or the entry to append.
func (p *Pipeline) decide(v projections.View, now time.Time, name string, req Request, c Command) decision {
	var hash string
	if req.CommandID != "" {
		hash = requestHash(name, c)
		if res, ok, err := fsm.CommandResult(v, req.CommandID, hash); err != nil {
			return decision{err: err}
		} else if ok {
			out, err := outcome(res)
			return decision{out: out, err: err}
		}
	}
	dec, err := c.Decide(v, now, p.ids)
	if err != nil {
		return decision{err: err, fromState: true}
	}
	if len(dec.Events) == 0 {
		return decision{fromState: true}
	}
	entry := events.Entry{Time: now.UnixNano(), CommandID: req.CommandID, Idempotent: req.CommandID != "",
		RequestHash: hash, Actor: req.Actor, Preconditions: dec.Preconditions}
	if entry.CommandID == "" {
		entry.CommandID = p.ids()
	}
	for _, pl := range dec.Events {
		ev, err := events.New(p.ids(), pl)
		if err != nil {
			return decision{err: err}
		}
		entry.Events = append(entry.Events, ev)
	}
	d := decision{entry: &entry}
	if a, ok := c.(Answered); ok && p.answers != nil {
		d.answer = a.AnswerRows()
	}
	return d
}

// answered returns the answer of a command with nothing to append; one
// taken from the state alone only once leadership is confirmed, so it is
// still current.
func (p *Pipeline) answered(ctx context.Context, d decision) (Outcome, error) {
	if d.fromState && p.leader != nil {
		if err := p.leader.ConsistentRead(ctx); err != nil {
			return Outcome{}, noLeader(err)
		}
	}
	if d.fromState && d.err == nil {
		return Outcome{Index: p.applied()}, nil
	}
	return d.out, d.err
}

// expect asks the FSM for the rows d's answer shows; call the returned
// function once the append has returned.
func (p *Pipeline) expect(d decision) (done func()) {
	if len(d.answer) == 0 {
		return func() {}
	}
	return p.answers.ExpectAnswer(d.entry.CommandID, d.answer)
}

// append appends an encoded entry and returns its apply result.
func (p *Pipeline) append(ctx context.Context, data []byte) (fsm.Result, error) {
	resp, _, err := p.log.Append(ctx, data)
	if err != nil {
		if errors.Is(err, raftlog.ErrNotLeader) || errors.Is(err, raftlog.ErrShutdown) ||
			errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// The outcome is unknown: a retry with the same idempotency key is safe.
			return fsm.Result{}, noLeader(err)
		}
		return fsm.Result{}, err
	}
	res, ok := resp.(fsm.Result)
	if !ok {
		return fsm.Result{}, fmt.Errorf("unexpected apply result %T", resp)
	}
	return res, nil
}

// requestHash digests what a command asks for, so a reused idempotency key
// with another request is told apart from a retry.
func requestHash(name string, c Command) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	_ = json.NewEncoder(h).Encode(c)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Answered returns the row at table and key of an Answered command's
// outcome: ok is false when the outcome has none (a duplicate).
func (o Outcome) Answered(table, key string) (row fsm.AnsweredRow, ok bool) {
	for _, r := range o.Rows {
		if r.Table == table && r.Key == key {
			return r, true
		}
	}
	return fsm.AnsweredRow{}, false
}

// noLeader reports that this server cannot answer as the leader: the
// client retries, on this server or another.
func noLeader(err error) error {
	if errors.Is(err, ErrNoLeader) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrNoLeader, err)
}

func outcome(res fsm.Result) (Outcome, error) {
	out := Outcome{Index: res.Index, Duplicate: res.Duplicate, Time: res.Time, Rows: res.Rows}
	var re *fsm.RejectedError
	if errors.As(res.Err, &re) {
		return out, &ConflictError{Precondition: re.Precondition, Reason: re.Reason}
	}
	return out, res.Err
}
