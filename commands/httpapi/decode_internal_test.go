package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
)

func TestDecodeNamespaceRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		path  string
		body  string
		want  namespace.Apply
		field string
	}{
		{name: "name from body", path: "payments", body: `{"Name":"payments","Description":"d","Meta":{"k":"v"}}`,
			want: namespace.Apply{Name: "payments", Description: "d", Meta: map[string]string{"k": "v"}}},
		{name: "name from path", path: "payments", body: `{"Description":"d"}`,
			want: namespace.Apply{Name: "payments", Description: "d"}},
		{name: "nomad fields ignored", path: "p", body: `{"Name":"p","Quota":"q","Capabilities":{"EnabledTaskDrivers":["exec"]}}`,
			want: namespace.Apply{Name: "p"}},
		{name: "mismatch", path: "payments", body: `{"Name":"billing"}`, field: "Name"},
		{name: "mismatch by case", path: "payments", body: `{"Name":"Payments"}`, field: "Name"},
		{name: "malformed", path: "payments", body: `{"Name"`, field: "body"},
		{name: "wrong type", path: "payments", body: `{"Description": 5}`, field: "Description"},
		{name: "empty", path: "payments", body: ``, field: "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/v1/namespace/x", strings.NewReader(tc.body))
			got, err := decodeNamespaceRequest(r, tc.path, commands.DefaultBodyLimit)
			if tc.field != "" {
				var ve *commands.ValidationError
				if !errors.As(err, &ve) || ve.Field != tc.field {
					t.Fatalf("err = %v, want a ValidationError on %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decoded %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzDecodeNamespaceRequest: the decoder never panics; it either fails
// with a *ValidationError or *TooLargeError, or returns a command for the
// path's namespace that Validate accepts or refuses with a
// *ValidationError; and what it accepts re-encodes to the same command.
func FuzzDecodeNamespaceRequest(f *testing.F) {
	const limit = 512
	for _, s := range [][2]string{
		{"payments", `{"Name":"payments","Description":"d","Meta":{"k":"v"}}`},
		{"payments", `{}`},
		{"payments", `null`},
		{"payments", `{"Name":"other"}`},
		{"bad_name!", `{"Description":"x"}`},
		{"", `{"Name":""}`},
		{"a", `{"Meta":{"":"v"}}`},
		{"a", `{"Description": 5}`},
		{"a", `{"Name":`},
		{"a", `[]`},
		{"a", `{"Description":"` + strings.Repeat("d", 300) + `"}`},
		{strings.Repeat("n", 129), `{}`},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		r := httptest.NewRequest("PUT", "/v1/namespace/x", bytes.NewReader(body))
		cmd, err := decodeNamespaceRequest(r, path, limit)
		if err != nil {
			var ve *commands.ValidationError
			var tl *commands.TooLargeError
			switch {
			case errors.As(err, &tl):
				if len(body) <= limit {
					t.Fatalf("%d bytes refused as too large", len(body))
				}
			case errors.As(err, &ve):
				if ve.Field == "" {
					t.Fatalf("ValidationError names no field: %v", err)
				}
			default:
				t.Fatalf("err = %v (%T), want a ValidationError or TooLargeError", err, err)
			}
			if s := commands.Status(err); s != 400 && s != 413 {
				t.Fatalf("status %d for %v", s, err)
			}
			return
		}
		if len(body) > limit {
			t.Fatalf("accepted %d bytes over a %d limit", len(body), limit)
		}
		if cmd.Name != path {
			t.Fatalf("command for %q decoded from path %q", cmd.Name, path)
		}
		if cmd.IfAbsent {
			t.Fatal("a request body set IfAbsent")
		}
		if err := cmd.Validate(); err != nil {
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("Validate = %v (%T), want a ValidationError", err, err)
			}
			return
		}
		if namespace.ValidName("Name", path) != nil {
			t.Fatalf("command for invalid path name %q passed Validate", path)
		}
		// decode → encode → decode is stable.
		enc, err := json.Marshal(api.NamespaceRequest{Name: cmd.Name, Description: cmd.Description, Meta: cmd.Meta})
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeNamespaceRequest(httptest.NewRequest("PUT", "/", bytes.NewReader(enc)), path, int64(len(enc)))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if len(cmd.Meta) == 0 {
			cmd.Meta, again.Meta = nil, nil
		}
		if !reflect.DeepEqual(cmd, again) {
			t.Fatalf("decode→encode→decode changed %+v to %+v", cmd, again)
		}
	})
}

func TestParseWait(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "30s", want: 30 * time.Second},
		{in: "5m", want: 5 * time.Minute},
		{in: "1500ms", want: 1500 * time.Millisecond},
		{in: "10", want: 10 * time.Second},
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "-1s", bad: true},
		{in: "-1", bad: true},
		{in: "1.5", bad: true},
		{in: "abc", bad: true},
		{in: "5 m", bad: true},
	} {
		got, err := parseWait(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) {
			t.Errorf("parseWait(%q) = %v, %v; want %v, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseBlocking(t *testing.T) {
	s := &Server{cfg: Config{DefaultWait: 5 * time.Minute, MaxWait: 10 * time.Minute}}
	for _, tc := range []struct {
		query string
		want  blockingParams
		field string
	}{
		{query: "", want: blockingParams{wait: 5 * time.Minute}},
		{query: "index=42", want: blockingParams{index: 42, wait: 5 * time.Minute}},
		{query: "index=42&wait=2s", want: blockingParams{index: 42, wait: 2 * time.Second}},
		{query: "index=1&wait=1h", want: blockingParams{index: 1, wait: 10 * time.Minute}},
		{query: "index=-1", field: "index"},
		{query: "index=x", field: "index"},
		{query: "index=18446744073709551616", field: "index"},
		{query: "wait=soon", field: "wait"},
		{query: "wait=-3s", field: "wait"},
	} {
		bp, err := s.parseBlocking(httptest.NewRequest("GET", "/v1/namespaces?"+tc.query, nil))
		if tc.field != "" {
			var ve *commands.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Errorf("%q: err = %v, want a ValidationError on %s", tc.query, err, tc.field)
			}
			continue
		}
		if err != nil || bp != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.query, bp, err, tc.want)
		}
	}
}

func TestTopicFilter(t *testing.T) {
	ev := func(topic, key, ns string, filter ...string) *Event {
		return &Event{Topic: topic, Key: key, Namespace: ns, FilterKeys: filter}
	}
	for _, tc := range []struct {
		query string
		ev    *Event
		want  bool
	}{
		{"", ev("Namespace", "payments", "payments"), true},
		{"topic=Namespace", ev("Namespace", "payments", "payments"), true},
		{"topic=Namespace:payments", ev("Namespace", "payments", "payments"), true},
		{"topic=Namespace:payments", ev("Namespace", "billing", "billing"), false},
		{"topic=Namespace:payments", ev("Server", "payments", ""), false},
		{"topic=Server:*", ev("Server", "s1", ""), true},
		{"topic=*", ev("Server", "s1", ""), true},
		{"topic=*:s1", ev("Server", "s1", ""), true},
		{"topic=*:s1", ev("Server", "s2", ""), false},
		{"topic=Job:web", ev("Job", "x", "default", "web"), true},
		{"topic=Namespace&topic=Server:s1", ev("Server", "s1", ""), true},
		{"namespace=default", ev("Job", "web", "prod"), false},
		{"namespace=*", ev("Job", "web", "prod"), true},
	} {
		f, err := parseTopics(httptest.NewRequest("GET", "/v1/event/stream?"+tc.query, nil))
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if got := f.match(tc.ev); got != tc.want {
			t.Errorf("%q matches %+v = %v, want %v", tc.query, tc.ev, got, tc.want)
		}
	}
	if _, err := parseTopics(httptest.NewRequest("GET", "/v1/event/stream?topic=:payments", nil)); commands.Status(err) != 400 {
		t.Fatalf("empty topic: %v", err)
	}
}
