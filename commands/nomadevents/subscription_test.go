package nomadevents

import (
	"net/url"
	"testing"

	"github.com/ordoplane/ordo/commands"
)

func TestSubscriptionMatch(t *testing.T) {
	ev := func(topic, key, ns string, fk ...string) *Event {
		return &Event{Topic: topic, Key: key, Namespace: ns, FilterKeys: fk}
	}
	for _, tc := range []struct {
		query string
		ev    *Event
		want  bool
	}{
		{"", ev("Job", "web", "default"), true},
		{"", ev("Job", "web", "prod"), false}, // namespace defaults to "default", as Nomad's
		{"namespace=*", ev("Job", "web", "prod"), true},
		{"namespace=prod", ev("Job", "web", "prod"), true},
		{"", ev("Node", "n1", ""), true}, // no namespace: always passes
		{"topic=Job", ev("Job", "web", "default"), true},
		{"topic=Job:*", ev("Job", "web", "default"), true},
		{"topic=Job:", ev("Job", "web", "default"), true},
		{"topic=Job:web", ev("Job", "web", "default"), true},
		{"topic=Job:web", ev("Job", "api", "default"), false},
		{"topic=Job:web", ev("Allocation", "a1", "default", "web"), false},
		{"topic=Allocation:web", ev("Allocation", "a1", "default", "web", "d1"), true},
		{"topic=Deployment:d1", ev("Allocation", "a1", "default", "web", "d1"), false},
		{"topic=*:web", ev("Allocation", "a1", "default", "web"), true},
		{"topic=*", ev("Node", "n1", ""), true},
		{"topic=Node&topic=Job:web", ev("Job", "web", "default"), true},
		{"topic=Node&topic=Job:web", ev("Evaluation", "e1", "default", "web"), false},
	} {
		q, _ := url.ParseQuery(tc.query)
		s, err := ParseSubscription(q)
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if got := s.Match(tc.ev); got != tc.want {
			t.Errorf("%q matches %+v = %v, want %v", tc.query, tc.ev, got, tc.want)
		}
	}
}

func TestParseSubscriptionRefuses(t *testing.T) {
	for _, query := range []string{"index=x", "index=-1", "topic=:web"} {
		q, _ := url.ParseQuery(query)
		if _, err := ParseSubscription(q); commands.Status(err) != 400 {
			t.Errorf("%q: %v, want 400", query, err)
		}
	}
	q, _ := url.ParseQuery("index=42&namespace=prod")
	s, err := ParseSubscription(q)
	if err != nil || s.Index != 42 || s.Namespace != "prod" || !s.Wants("Job") {
		t.Errorf("%+v %v", s, err)
	}
}

// FuzzParseSubscription: no query panics the parser; a parsed
// subscription matches events without panicking, and one that parses
// has a namespace and a topic.
func FuzzParseSubscription(f *testing.F) {
	for _, s := range []string{"", "index=5&topic=Job:web", "topic=*&namespace=*", "topic=:x", "topic=a:b:c&topic=a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		s, err := ParseSubscription(q)
		if err != nil {
			if commands.Status(err) != 400 {
				t.Fatalf("%q: %v is not a 400", raw, err)
			}
			return
		}
		if s.Namespace == "" || len(s.Topics) == 0 {
			t.Fatalf("%q: %+v", raw, s)
		}
		s.Match(&Event{Topic: "Job", Key: "web", Namespace: "default", FilterKeys: []string{"x"}})
	})
}
