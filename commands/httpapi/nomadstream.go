package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/nomadevents"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	acls "github.com/ordoplane/ordo/projections/acl"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nodepools"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/projections/services"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// eventStreamRoutes serves the two event streams: Nomad's shape on
// /v1/event/stream (one event per entity, derived from the log), and
// ordo's own entry-level events on /v1/operator/log/stream (stream.go).
func (s *Server) eventStreamRoutes() {
	s.handle("GET /v1/event/stream", endpoint(s.nomadEventStream))
	s.handle("GET /v1/operator/log/stream", endpoint(s.eventStream))
}

// nomadEventStream serves GET /v1/event/stream as Nomad does: from ?index
// (0: the oldest entry the archive holds; N: the first entry at or after
// N), then live; one frame per raft index with the events of the
// entities its entry touched, each carrying the entity as it stood at
// that index; {} as a heartbeat when idle.
func (s *Server) nomadEventStream(w http.ResponseWriter, r *http.Request) error {
	sub, err := nomadevents.ParseSubscription(r.URL.Query())
	if err != nil {
		return err
	}
	allow, err := s.streamAccess(r, sub)
	if err != nil {
		return err
	}
	next, err := s.streamStart(sub.Index)
	if err != nil {
		return err
	}
	log := s.cfg.Logger.With("stream", "nomad", "from_index", next, "namespace", sub.Namespace)
	return s.follow(w, r, next, log, func(enc *json.Encoder, from, to uint64) (uint64, error) {
		return s.sendNomadFrames(r.Context(), enc, sub, allow, from, to)
	})
}

// follow answers a stream: an ndjson frame per index from next on, written
// by send for the indexes [from, to] applied and not yet sent (it returns
// the next index to send), then live as entries apply, with {} every
// StreamHeartbeat when idle, until the client hangs up.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, next uint64, log *slog.Logger,
	send func(enc *json.Encoder, from, to uint64) (uint64, error)) error {
	notify := s.cfg.FSM.Notifier()
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()
	log.Debug("event stream opened", "index", next)

	heartbeat := time.NewTicker(s.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	for {
		applied, wake := notify.Applied()
		if next <= applied {
			n, err := send(enc, next, applied)
			if err != nil {
				if r.Context().Err() == nil {
					log.Warn("event stream ended", "err", err, "index", next)
				}
				return nil
			}
			next = n
			flush()
			continue
		}
		select {
		case <-r.Context().Done():
			log.Debug("event stream closed", "index", next)
			return nil
		case <-heartbeat.C:
			if _, err := w.Write([]byte("{}\n")); err != nil {
				return nil
			}
			flush()
		case <-wake:
		}
	}
}

// streamStart returns the first index a stream asking for index sends:
// the oldest archived when index is 0 or older than the archive, else
// index itself (its entry included, as Nomad starts at the requested
// index); the next one applied when the archive is empty.
func (s *Server) streamStart(index uint64) (uint64, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	first, err := archive.First(snap)
	if err != nil {
		return 0, err
	}
	if first == 0 {
		last, err := projections.NewView(snap).AppliedIndex()
		return max(index, last+1), err
	}
	return max(index, first), nil
}

// streamAccess checks a subscription as Nomad does: every topic asked for
// needs its capability (management for *, the ACL topics and NodePool;
// read-job in the namespace asked for the job topics; node read for
// Node), else 403. It returns the per-event check for what a wildcard
// namespace or the Namespace topic could let through.
func (s *Server) streamAccess(r *http.Request, sub nomadevents.Subscription) (func(*nomadevents.Event) bool, error) {
	if s.cfg.ACL == nil {
		return func(*nomadevents.Event) bool { return true }, nil
	}
	id := identityOf(r)
	if id == nil {
		return nil, errPermissionDenied
	}
	a := id.ACL
	for topic := range sub.Topics {
		ok := true
		switch {
		case nomadevents.Management(topic):
			ok = a.IsManagement()
		case nomadevents.Namespaced(topic):
			ok = a.AllowNamespace(sub.Namespace, policy.CapReadJob)
		case topic == nomadevents.TopicNode:
			ok = a.AllowNode(false)
		}
		if !ok {
			return nil, errPermissionDenied
		}
	}
	return func(e *nomadevents.Event) bool {
		switch {
		case nomadevents.Namespaced(e.Topic):
			return a.AllowNamespace(e.Namespace, policy.CapReadJob)
		case e.Topic == nomadevents.TopicNamespace:
			return a.AllowAnyNamespace(e.Key)
		case e.Topic == nomadevents.TopicNode:
			return a.AllowNode(false)
		}
		return a.IsManagement()
	}, nil
}

// maxNomadPerPass bounds the archived events one pass of a stream reads
// before it looks at its connection again.
const maxNomadPerPass = 4096

// sendNomadFrames writes the frames of indexes [from, to] and returns the
// next index to send.
func (s *Server) sendNomadFrames(ctx context.Context, enc *json.Encoder, sub nomadevents.Subscription,
	allow func(*nomadevents.Event) bool, from, to uint64) (uint64, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	st := &streamStates{s: s, ctx: ctx, live: projections.NewView(snap)}
	st.liveIndex, _ = st.live.AppliedIndex()

	var entry []*events.Event
	var index uint64
	emit := func() error {
		if len(entry) == 0 {
			return nil
		}
		frame, err := s.nomadFrame(st, sub, allow, index, entry)
		entry = entry[:0]
		if err != nil || len(frame.Events) == 0 {
			return err
		}
		return enc.Encode(frame)
	}
	read := 0
	next := to + 1
	err := archive.Scan(snap, from, to, func(i uint64, _ uint32, data []byte) error {
		if i != index {
			if err := emit(); err != nil {
				return err
			}
			if read >= maxNomadPerPass {
				next = i
				return kv.ErrStop
			}
			index = i
		}
		read++
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		if nomadevents.Mapped(ev.Type) {
			entry = append(entry, ev)
		}
		return nil
	})
	if err != nil {
		return from, err
	}
	return next, emit()
}

// nomadFrame builds the frame of the entry at index: its Nomad events the
// subscription asks for and the caller may see.
func (s *Server) nomadFrame(st *streamStates, sub nomadevents.Subscription, allow func(*nomadevents.Event) bool,
	index uint64, entry []*events.Event) (nomadevents.Frame, error) {
	frame := nomadevents.Frame{Index: index}
	defer st.release() // a frame reads at its index and the one before
	refs, err := nomadevents.Map(entry)
	if err != nil {
		return frame, err
	}
	for _, ref := range refs {
		if !sub.Wants(ref.Topic) || ref.ReadAt(index) == 0 ||
			ref.Namespace != "" && sub.Namespace != "*" && ref.Namespace != sub.Namespace {
			continue
		}
		v, err := st.at(ref.ReadAt(index))
		if err != nil {
			return frame, err
		}
		ev, found, err := s.nomadEvent(v, ref)
		if err != nil {
			return frame, err
		}
		if !found {
			s.cfg.Logger.Debug("event stream: entity not in the state read", "topic", ref.Topic, "key", ref.Key, "index", index)
			continue
		}
		ev.Index = index
		if sub.Match(&ev) && allow(&ev) {
			frame.Events = append(frame.Events, ev)
			s.metrics.nomadEvents.WithLabelValues(ev.Topic).Inc()
		}
	}
	return frame, nil
}

// nomadEvent renders ref's entity as read in v, as the API's GET for it
// answers (an allocation without its job, as Nomad's stream sends it; a
// token without its secret); found is false when v does not hold it.
func (s *Server) nomadEvent(v projections.View, ref nomadevents.Ref) (nomadevents.Event, bool, error) {
	ev := nomadevents.Event{Topic: ref.Topic, Type: ref.Type, Key: ref.Key}
	var (
		entity any
		err    error
	)
	switch ref.Topic {
	case nomadevents.TopicJob:
		var j *jobs.Job
		if j, err = jobs.Get(v, ref.Namespace, ref.Key); err == nil {
			entity, ev.Namespace = j, j.Namespace
		}
	case nomadevents.TopicAllocation:
		var a *allocs.Alloc
		if a, err = allocs.Get(v, ref.Key); err == nil {
			entity, ev.Namespace, ev.FilterKeys = a, a.Namespace, filterKeys(a.JobID, a.DeploymentID)
		}
	case nomadevents.TopicEvaluation:
		var e *evals.Eval
		if e, err = evals.Get(v, ref.Key); err == nil {
			entity, ev.Namespace, ev.FilterKeys = e, e.Namespace, filterKeys(e.JobID, e.DeploymentID)
		}
	case nomadevents.TopicDeployment:
		var d *deployments.Deployment
		if d, err = deployments.Get(v, ref.Key); err == nil {
			entity, ev.Namespace, ev.FilterKeys = d, d.Namespace, filterKeys(d.JobID)
		}
	case nomadevents.TopicNode:
		entity, err = nodes.Get(v, ref.Key)
	case nomadevents.TopicNodePool:
		var p *nodepools.NodePool
		if p, err = nodepools.Get(v, ref.Key); err == nil {
			entity = poolShape(p)
		}
	case nomadevents.TopicNamespace:
		entity, err = namespaces.Get(v, ref.Key)
	case nomadevents.TopicACLToken:
		var t *acls.Token
		if t, err = acls.GetToken(v, ref.Key); err == nil {
			entity = tokenJSON(v, t, "")
		}
	case nomadevents.TopicACLPolicy:
		var p *acls.Policy
		if p, err = acls.GetPolicy(v, ref.Key); err == nil {
			entity = policyJSON(p)
		}
	case nomadevents.TopicACLRole:
		var ro *acls.Role
		if ro, err = acls.GetRole(v, ref.Key); err == nil {
			entity, ev.FilterKeys = roleJSON(ro), []string{ro.Name}
		}
	case nomadevents.TopicService:
		var sr *events.ServiceRegistration
		if sr, err = services.Get(v, ref.Key); err == nil {
			entity, ev.Namespace, ev.FilterKeys = sr, sr.Namespace, filterKeys(sr.ServiceName, sr.JobID, sr.AllocID)
		}
	default:
		return ev, false, nil
	}
	if errors.Is(err, projections.ErrNotFound) {
		return ev, false, nil
	}
	if err != nil {
		return ev, false, err
	}
	ev.Payload = map[string]any{ref.Topic: entity}
	if ref.Removed {
		ev.Payload["Deleted"] = true // the entity as it was, now gone (nomad/api's DeregisteredJob)
	}
	return ev, true, nil
}

// filterKeys returns the ids given that are set.
func filterKeys(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// streamStates holds the states a pass of the stream reads entities
// from: the live one, exact at its applied index, and past ones from the
// history store (WithHistory), opened once per index and released after
// each frame.
type streamStates struct {
	s         *Server
	ctx       context.Context
	live      projections.View
	liveIndex uint64
	past      map[uint64]projections.View
	releases  []func()
}

// at returns the state once index was applied. Without a history store,
// or when it cannot serve index, it is the live state (newer than index),
// counted in ordo_event_stream_later_state_total.
func (st *streamStates) at(index uint64) (projections.View, error) {
	if index == st.liveIndex {
		return st.live, nil
	}
	if v, ok := st.past[index]; ok {
		return v, nil
	}
	hs := st.s.historyStatus.Load()
	if hs == nil {
		st.s.metrics.streamLater.Inc()
		return st.live, nil
	}
	v, release, err := (*hs).View(st.ctx, index)
	if err != nil {
		if st.ctx.Err() != nil {
			return projections.View{}, st.ctx.Err()
		}
		st.s.cfg.Logger.Debug("event stream: past state not served; reading the live one", "index", index,
			"live_index", st.liveIndex, "err", err)
		st.s.metrics.streamLater.Inc()
		return st.live, nil
	}
	if st.past == nil {
		st.past = map[uint64]projections.View{}
	}
	st.past[index] = v
	st.releases = append(st.releases, release)
	return v, nil
}

func (st *streamStates) release() {
	for _, r := range st.releases {
		r()
	}
	st.releases, st.past = st.releases[:0], nil
}

// policyJSON renders an ACL policy as GET /v1/acl/policy/{name} answers it.
func policyJSON(p *acls.Policy) api.ACLPolicy {
	return api.ACLPolicy{Name: p.Name, Description: p.Description, Rules: p.Rules, JobACL: p.JobACL,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}
