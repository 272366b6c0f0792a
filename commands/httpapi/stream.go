package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// topicFilter selects events by Nomad's topic=Topic:Key parameters.
type topicFilter struct {
	all    bool
	topics map[string][]string // topic → keys ("*" for all)
	ns     string
}

func parseTopics(r *http.Request) (topicFilter, error) {
	q := r.URL.Query()
	f := topicFilter{topics: map[string][]string{}, ns: q.Get("namespace")}
	if f.ns == "*" {
		f.ns = ""
	}
	vals := q["topic"]
	if len(vals) == 0 {
		f.all = true
	}
	for _, v := range vals {
		topic, key, ok := strings.Cut(v, ":")
		if !ok {
			key = "*"
		}
		if topic == "" {
			return f, commands.Invalid("topic", "%q must be Topic or Topic:Key", v)
		}
		if topic == "*" && key == "*" {
			f.all = true
		}
		f.topics[topic] = append(f.topics[topic], key)
	}
	return f, nil
}

func (f topicFilter) match(e *Event) bool {
	if f.ns != "" && e.Namespace != "" && e.Namespace != f.ns {
		return false
	}
	if f.all {
		return true
	}
	for _, topic := range []string{e.Topic, "*"} {
		for _, k := range f.topics[topic] {
			if k == "*" || k == e.Key {
				return true
			}
			for _, fk := range e.FilterKeys {
				if k == fk {
					return true
				}
			}
		}
	}
	return false
}

// streamFrame is one ndjson line of the event stream.
type streamFrame struct {
	Index  uint64
	Events []Event
}

// eventStream serves GET /v1/event/stream: archived events from ?index,
// then live ones as they are applied, one frame per index, with {} as a
// heartbeat when idle.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) error {
	filter, err := parseTopics(r)
	if err != nil {
		return err
	}
	notify := s.cfg.FSM.Notifier()
	applied, _ := notify.Applied()
	next := applied + 1
	if v := r.URL.Query().Get("index"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return commands.Invalid("index", "%q is not a non-negative integer", v)
		}
		if n > 0 {
			next = n
		}
	}
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

	heartbeat := time.NewTicker(s.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	for {
		applied, wake := notify.Applied()
		if next <= applied {
			n, err := s.sendFrames(enc, filter, next, applied)
			if err != nil {
				s.cfg.Logger.Warn("event stream ended", "err", err, "index", next)
				return nil
			}
			next = n
			flush()
			continue
		}
		select {
		case <-r.Context().Done():
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
