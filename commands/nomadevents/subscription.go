package nomadevents

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/commands"
)

// Event is one event of Nomad's stream (the JSON of nomad/api's Event).
type Event struct {
	Topic     string
	Type      string
	Key       string
	Namespace string
	// FilterKeys are the other ids a topic filter matches the event by:
	// an allocation's or an evaluation's JobID and DeploymentID, a
	// deployment's JobID, a role's name.
	FilterKeys []string
	Index      uint64
	// Payload holds the entity under its kind's name ({"Job": ...}).
	Payload map[string]any
}

// Frame is one line of the stream: the events of one raft index.
type Frame struct {
	Index  uint64
	Events []Event
}

// Subscription is what a GET /v1/event/stream asks for.
type Subscription struct {
	// Index is the first raft index to send; 0 is the oldest the server holds.
	Index uint64
	// Namespace selects namespaced events (TopicJob, ...) of one
	// namespace; "*" all of them. Absent, it is "default", as Nomad's.
	Namespace string
	// Topics maps each topic asked for to the keys that select its
	// events ("*" every one); TopicAll's keys apply to every topic.
	Topics map[string][]string
}

// maxTopics bounds the topic parameters of one request.
const maxTopics = 256

// ParseSubscription reads index, namespace and topic from q as Nomad's
// /v1/event/stream does: topic=Topic:Key, repeatable; Topic alone or
// Topic:* is every key; no topic is every topic (*:*).
func ParseSubscription(q url.Values) (Subscription, error) {
	s := Subscription{Namespace: q.Get("namespace"), Topics: map[string][]string{}}
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	if v := q.Get("index"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return s, commands.Invalid("index", "%q is not a non-negative integer", v)
		}
		s.Index = n
	}
	vals := q["topic"]
	if len(vals) > maxTopics {
		return s, commands.Invalid("topic", "%d topics; at most %d", len(vals), maxTopics)
	}
	if len(vals) == 0 {
		s.Topics[TopicAll] = []string{"*"}
	}
	for _, v := range vals {
		topic, key, ok := strings.Cut(v, ":")
		if !ok || key == "" {
			key = "*"
		}
		if topic == "" {
			return s, commands.Invalid("topic", "%q must be Topic or Topic:Key", v)
		}
		s.Topics[topic] = append(s.Topics[topic], key)
	}
	return s, nil
}

// Wants reports whether the subscription asks for any event of topic.
func (s Subscription) Wants(topic string) bool {
	return len(s.Topics[topic]) > 0 || len(s.Topics[TopicAll]) > 0
}

// Match reports whether e is one the subscription asks for: its
// namespace (events of no namespace always pass) and a key of its topic
// or of TopicAll equal to "*", its Key or one of its FilterKeys.
func (s Subscription) Match(e *Event) bool {
	if s.Namespace != "*" && e.Namespace != "" && e.Namespace != s.Namespace {
		return false
	}
	for _, topic := range []string{e.Topic, TopicAll} {
		for _, k := range s.Topics[topic] {
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
