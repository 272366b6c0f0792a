package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/ordoplane/ordo/commands/nomadevents"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// topicFilter selects events of ordo's own stream by Nomad's topic and
// namespace parameters (nomadevents.Subscription), except that an absent
// namespace selects every namespace.
type topicFilter struct{ sub nomadevents.Subscription }

func parseTopics(r *http.Request) (topicFilter, error) {
	q := r.URL.Query()
	sub, err := nomadevents.ParseSubscription(q)
	if q.Get("namespace") == "" {
		sub.Namespace = "*"
	}
	return topicFilter{sub}, err
}

func (f topicFilter) match(e *Event) bool {
	return f.sub.Match(&nomadevents.Event{Topic: e.Topic, Key: e.Key, Namespace: e.Namespace, FilterKeys: e.FilterKeys})
}

// streamFrame is one ndjson line of the event stream.
type streamFrame struct {
	Index  uint64
	Events []Event
}

// eventStream serves GET /v1/operator/log/stream: archived events from
// ?index (without it, from the next one applied), then live ones as they
// are applied, one frame per index, with {} as a heartbeat when idle.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) error {
	filter, err := parseTopics(r)
	if err != nil {
		return err
	}
	applied, _ := s.cfg.FSM.Notifier().Applied()
	next := applied + 1
	if filter.sub.Index > 0 {
		next = filter.sub.Index
	}
	return s.follow(w, r, next, s.cfg.Logger.With("stream", "log"), func(enc *json.Encoder, from, to uint64) (uint64, error) {
		return s.sendFrames(enc, filter, from, to)
	})
}

// sendFrames writes the frames for indexes [from, to] and returns the next
// index to send.
func (s *Server) sendFrames(enc *json.Encoder, filter topicFilter, from, to uint64) (uint64, error) {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	var frame streamFrame
	emit := func() error {
		if len(frame.Events) == 0 {
			return nil
		}
		err := enc.Encode(&frame)
		frame = streamFrame{}
		return err
	}
	const maxPerPass = 4096
	sent := 0
	next := to + 1
	err := archive.Scan(snap, from, to, func(index uint64, _ uint32, data []byte) error {
		if index != frame.Index {
			if err := emit(); err != nil {
				return err
			}
			if sent >= maxPerPass {
				next = index
				return kv.ErrStop
			}
			frame.Index = index
		}
		e, err := archivedEventJSON(data)
		if err != nil {
			return err
		}
		sent++
		if filter.match(&e) {
			frame.Events = append(frame.Events, e)
		}
		return nil
	})
	if err != nil {
		return from, err
	}
	return next, emit()
}
