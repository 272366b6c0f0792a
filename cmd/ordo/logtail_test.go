package main

import (
	"strings"
	"testing"
)

// TestLogTailReadsTheLogStream: ordo log tail follows ordo's own events
// on /v1/operator/log/stream (not Nomad's /v1/event/stream), passing its
// index and topics, and prints each event as ordo log show does.
func TestLogTailReadsTheLogStream(t *testing.T) {
	api := &fakeAPI{status: 200, answer: `{"Index":5,"Events":[{"Type":"NamespaceUpserted","Index":5,"Seq":0,"Version":3,` +
		`"Time":"2025-01-01T00:00:00Z","Topic":"Namespace","Key":"web"}]}` + "\n{}\n"}
	addr := api.start(t)
	code, stdout, stderr := runCLI("log", "tail", "-address", addr, "-index", "5", "-topic", "Namespace:web")
	if api.uri != "/v1/operator/log/stream?index=5&topic=Namespace%3Aweb" {
		t.Errorf("request URI %q", api.uri)
	}
	if !strings.HasPrefix(stdout, "5/0  2025-01-01T00:00:00Z  NamespaceUpserted v3  Namespace web") {
		t.Errorf("stdout %q", stdout)
	}
	if code != 1 || !strings.Contains(stderr, "closed by the server") {
		t.Errorf("exit %d, stderr %q: want the stream's end reported", code, stderr)
	}
}
