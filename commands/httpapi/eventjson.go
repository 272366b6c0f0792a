package httpapi

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// Event is one of ordo's own events as the log's endpoints show it
// (/v1/operator/log, /v1/operator/log/stream): the fields of Nomad's
// stream events first (Topic, Type, Key, Namespace, FilterKeys, Index,
// Payload), then ordo's envelope. /v1/event/stream serves Nomad's own
// shape instead (nomadstream.go). Payload is redacted and upcast to its type's current version,
// which Version gives (as the Kafka mirror's records do).
type Event struct {
	Topic         string
	Type          string
	Key           string
	Namespace     string
	FilterKeys    []string
	Index         uint64
	Payload       map[string]any
	Seq           uint32
	Version       uint16
	ID            string
	Time          time.Time
	Actor         string       `json:",omitempty"`
	CorrelationID string       `json:",omitempty"`
	Keys          []events.Key `json:",omitempty"`
}

// archivedEventJSON decodes an archived event and renders it for the API.
func archivedEventJSON(data []byte) (Event, error) {
	ev, err := events.DecodeEvent(data)
	if err != nil {
		return Event{}, err
	}
	return eventJSON(ev)
}

// eventJSON renders ev for the API.
func eventJSON(ev *events.Event) (Event, error) {
	payload, err := events.Redacted(ev)
	if err != nil {
		return Event{}, err
	}
	t, _ := events.Lookup(ev.Type)
	out := Event{
		Topic: t.Topic, Type: ev.Type, Namespace: ev.Key(events.KindNamespace), Index: ev.Index,
		Payload: payload, Seq: ev.Seq, Version: t.Version, ID: ev.ID, Time: time.Unix(0, ev.Time).UTC(),
		Actor: ev.Actor, CorrelationID: ev.CorrelationID, Keys: ev.Keys,
	}
	if len(ev.Keys) > 0 {
		out.Key = ev.Keys[0].Value
		for _, k := range ev.Keys[1:] {
			out.FilterKeys = append(out.FilterKeys, k.Value)
		}
	}
	return out, nil
}
