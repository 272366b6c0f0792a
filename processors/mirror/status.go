package mirror

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Status is the mirror's state as GET /v1/operator/mirror shows it.
type Status struct {
	// Enabled reports a configured mirror.
	Enabled bool
	// Running reports that this server mirrors (it leads).
	Running bool
	Brokers []string
	// BrokersReachable reports that a broker answered just now.
	BrokersReachable bool
	Topic            string
	Format           string
	TransactionalID  string
	// Partitions is the topic's partition count when the session started.
	Partitions int32
	// MirroredIndex and MirroredSeq are the last event committed to the
	// topic (by this server's current or last session).
	MirroredIndex uint64
	MirroredSeq   uint32
	// ResumeIndex and ResumeSeq are where the last session resumed: the
	// greatest position it found in the topic.
	ResumeIndex uint64
	ResumeSeq   uint32
	// LagEvents counts archived events not yet in the topic; LagSeconds is
	// the age of the oldest of them (0 when caught up or not running).
	LagEvents  uint64
	LagSeconds float64
	// EventsMirrored counts events this server committed since it started.
	EventsMirrored uint64
	// LastError is the last session failure, if any, and when it happened.
	LastError     string     `json:",omitempty"`
	LastErrorTime *time.Time `json:",omitempty"`
}

// Status reports the mirror's state; it pings the brokers, waiting at most
// until ctx ends or 2s.
func (m *Mirror) Status(ctx context.Context) Status {
	s := m.cfg.Settings
	m.mu.Lock()
	st := Status{Enabled: true, Running: m.mu.running, Brokers: s.Brokers, Topic: s.Topic, Format: s.Format,
		TransactionalID: s.TransactionalID, Partitions: m.mu.partitions,
		MirroredIndex: m.mu.mirrored.Index, MirroredSeq: m.mu.mirrored.Seq,
		ResumeIndex: m.mu.resume.Index, ResumeSeq: m.mu.resume.Seq,
		EventsMirrored: m.mu.total, LastError: m.mu.lastErr}
	if !m.mu.lastErrAt.IsZero() {
		t := m.mu.lastErrAt.UTC()
		st.LastErrorTime = &t
	}
	m.mu.Unlock()
	st.LagEvents = m.lagEvents()
	st.LagSeconds = m.lagSeconds()
	st.BrokersReachable = m.ping(ctx)
	return st
}

// ping reports whether a broker answers.
func (m *Mirror) ping(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(m.opts...)
	if err != nil {
		return false
	}
	defer cl.Close()
	return cl.Ping(ctx) == nil
}
