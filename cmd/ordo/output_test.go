package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
)

func TestFormatEvent(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 30, 5, 123456789, time.UTC)
	tests := []struct {
		name string
		ev   event
		want string
	}{
		{
			name: "full",
			ev: event{Topic: "Namespace", Type: "NamespaceUpserted", Key: "web", Index: 12, Seq: 1, Version: 2,
				Time: at, Payload: json.RawMessage(`{ "Namespace": {"Name": "web"} }`)},
			want: `12/1  2025-03-01T12:30:05Z  NamespaceUpserted v2  Namespace web  {"Namespace":{"Name":"web"}}`,
		},
		{
			name: "no key, topic or payload; time in another zone",
			ev:   event{Type: "ClusterBootstrapped", Index: 3, Version: 1, Time: at.In(time.FixedZone("X", 3600))},
			want: `3/0  2025-03-01T12:30:05Z  ClusterBootstrapped v1  - -  null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formatEvent(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPrintEvent(t *testing.T) {
	raw := json.RawMessage(`{"Topic":"Namespace","Type":"NamespaceDeleted","Key":"web","Index":7,"Seq":0,
		"Version":1,"Time":"2025-03-01T12:30:05.5Z","Payload":{"Name":"web"},"ID":"abc"}`)
	var b bytes.Buffer
	if err := printEvent(&b, raw, false); err != nil {
		t.Fatal(err)
	}
	if want := "7/0  2025-03-01T12:30:05Z  NamespaceDeleted v1  Namespace web  {\"Name\":\"web\"}\n"; b.String() != want {
		t.Errorf("text: got %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := printEvent(&b, raw, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ID":"abc"`) || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("json: got %q, want one line with every field", b.String())
	}
}

func TestTailFrames(t *testing.T) {
	stream := `{}
{"Index":5,"Events":[{"Type":"A","Index":5,"Seq":0,"Version":1,"Time":"2025-01-01T00:00:00Z"},{"Type":"B","Index":5,"Seq":1,"Version":1,"Time":"2025-01-01T00:00:00Z"}]}
{}
{"Index":6,"Events":[{"Type":"C","Index":6,"Seq":0,"Version":1,"Time":"2025-01-01T00:00:00Z","Topic":"T","Key":"k"}]}
`
	var b bytes.Buffer
	err := tailFrames(strings.NewReader(stream), &b, false)
	if err == nil || !strings.Contains(err.Error(), "closed by the server") {
		t.Errorf("err = %v, want the stream's end reported", err)
	}
	want := "5/0  2025-01-01T00:00:00Z  A v1  - -  null\n" +
		"5/1  2025-01-01T00:00:00Z  B v1  - -  null\n" +
		"6/0  2025-01-01T00:00:00Z  C v1  T k  null\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintNamespaces(t *testing.T) {
	var b bytes.Buffer
	err := printNamespaces(&b, []api.Namespace{
		{Name: "default", Description: "Default shared namespace"},
		{Name: "web-production", Description: "two\nlines"},
		{Name: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Name            Description\n" +
		"default         Default shared namespace\n" +
		"web-production  two lines\n" +
		"x               \n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := printNamespaces(&b, nil); err != nil || b.String() != "No namespaces found\n" {
		t.Errorf("empty: %q, %v", b.String(), err)
	}
}

func TestPrintNamespace(t *testing.T) {
	var b bytes.Buffer
	err := printNamespace(&b, api.Namespace{Name: "web", Meta: map[string]string{"tier": "1", "owner": "ann"},
		CreateIndex: 4, ModifyIndex: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Name         = web\n" +
		"Description  = <none>\n" +
		"Create Index = 4\n" +
		"Modify Index = 9\n" +
		"\n" +
		"Metadata\n" +
		"owner = ann\n" +
		"tier  = 1\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintPeers(t *testing.T) {
	var b bytes.Buffer
	err := printPeers(&b, api.RaftConfiguration{Servers: []api.RaftServer{
		{ID: "id1", Node: "s1", Address: "127.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
		{ID: "id2", Node: "server-2", Address: "127.0.0.2:4647", Voter: false, RaftProtocol: "3"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Node      ID   Address         State     Voter  RaftProtocol\n" +
		"s1        id1  127.0.0.1:4647  leader    true   3\n" +
		"server-2  id2  127.0.0.2:4647  follower  false  3\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintJSON(t *testing.T) {
	var b bytes.Buffer
	if err := printJSON(&b, json.RawMessage(`[{"Name":"default","Extra":1}]`)); err != nil {
		t.Fatal(err)
	}
	want := "[\n    {\n        \"Name\": \"default\",\n        \"Extra\": 1\n    }\n]\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestParseMeta(t *testing.T) {
	m, err := parseMeta([]string{"a=1", "b=x=y", "a=2", "c="})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["a"] != "2" || m["b"] != "x=y" || m["c"] != "" {
		t.Errorf("got %v", m)
	}
	for _, bad := range []string{"novalue", "=v"} {
		if _, err := parseMeta([]string{bad}); err == nil {
			t.Errorf("parseMeta(%q) succeeded", bad)
		}
	}
}
