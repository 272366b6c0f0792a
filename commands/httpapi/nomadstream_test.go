package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/nomadevents"
)

// nomadStream opens path with token and returns the answer's status and,
// for a 200, its frames up to the first at or past index until.
func (g *aclAgent) nomadStream(t *testing.T, path, token string, until uint64) (int, []nomadevents.Frame, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+path, nil)
	req.Header.Set("X-Nomad-Token", token)
	resp, err := g.hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, ""
	}
	var frames []nomadevents.Frame
	var raw strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		raw.WriteString(sc.Text() + "\n")
		var f nomadevents.Frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("%s: frame %q: %v", path, sc.Text(), err)
		}
		if f.Index == 0 {
			continue // heartbeat
		}
		frames = append(frames, f)
		if f.Index >= until {
			return http.StatusOK, frames, raw.String()
		}
	}
	t.Fatalf("%s: stream ended before index %d: %v", path, until, sc.Err())
	return 0, nil, ""
}

// TestNomadStreamACL: the stream checks each topic asked for as Nomad
// does — every topic and the ACL topics for management only, the job
// topics with read-job in the namespace asked for, Node with node read —
// and a management token's ACLToken events name the token by accessor,
// never with its secret.
func TestNomadStreamACL(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	g.policy(t, boot.SecretID, "jobs", `namespace "default" { policy = "read" }`)
	reader := g.token(t, boot.SecretID, "reader", "jobs")
	var self struct{ CreateIndex uint64 }
	g.call(t, "GET", "/v1/acl/token/self", reader.SecretID, nil, &self)

	for _, tc := range []struct {
		query string
		want  int
	}{
		{"", http.StatusForbidden}, // every topic: management
		{"?topic=*", http.StatusForbidden},
		{"?topic=ACLToken", http.StatusForbidden},
		{"?topic=Node", http.StatusForbidden},
		{"?topic=Job&namespace=other", http.StatusForbidden},
		{"?topic=Job&namespace=*", http.StatusForbidden},
	} {
		if st, _, _ := g.nomadStream(t, "/v1/event/stream"+tc.query, reader.SecretID, 0); st != tc.want {
			t.Errorf("%q as a read-job token: %d, want %d", tc.query, st, tc.want)
		}
	}
	// Allowed, the job topics carry the job's events.
	var reg struct{ JobModifyIndex uint64 }
	if st := g.call(t, "PUT", "/v1/jobs", boot.SecretID, jobBody, &reg); st != http.StatusOK {
		t.Fatalf("register: %d", st)
	}
	_, frames, _ := g.nomadStream(t, "/v1/event/stream?topic=Job:matrix&topic=Evaluation:matrix", reader.SecretID, reg.JobModifyIndex)
	if len(frames) != 1 || len(frames[0].Events) != 2 || frames[0].Events[0].Key != "matrix" {
		t.Fatalf("the reader's job stream: %+v", frames)
	}

	// A management token: every topic, the tokens keyed by accessor, no secret.
	st, frames, raw := g.nomadStream(t, "/v1/event/stream?index=0", boot.SecretID, self.CreateIndex)
	if st != http.StatusOK {
		t.Fatalf("management: %d", st)
	}
	var sawReader bool
	for _, f := range frames {
		for _, e := range f.Events {
			if e.Topic == "ACLToken" && e.Key == reader.AccessorID {
				sawReader = true
				tok, _ := e.Payload["ACLToken"].(map[string]any)
				if tok["AccessorID"] != reader.AccessorID || tok["SecretID"] != "" {
					t.Errorf("token event payload %v", e.Payload)
				}
			}
		}
	}
	if !sawReader {
		t.Fatalf("no ACLToken event for the reader token in %s", raw)
	}
	for _, s := range []string{boot.SecretID, reader.SecretID} {
		if strings.Contains(raw, s) {
			t.Fatal("a token's secret is in the event stream")
		}
	}
}

// TestNomadStreamLive: without a history store (a server built here),
// the stream sends what the archive holds, {} when idle, and then the
// namespace written, in Nomad's shape, read from the live state.
func TestNomadStreamLive(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	base := serve(t, newAPI(t, d, httpapi.Config{StreamHeartbeat: 20 * time.Millisecond}))
	s := openStream(t, base+"/v1/event/stream?topic=Namespace")
	// No index is 0: the history first (the default namespace), then
	// heartbeats.
	if l := s.next(t); !strings.Contains(l, `"Key":"default"`) {
		t.Fatalf("first frame %q, want the default namespace's", l)
	}
	if l := s.next(t); l != "{}" {
		t.Fatalf("idle stream sent %q, want heartbeat {}", l)
	}
	idx := d.putNamespace(t, "payments", "live")
	var f nomadevents.Frame
	for {
		l := s.next(t)
		if l == "{}" {
			continue
		}
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		break
	}
	if f.Index != idx || len(f.Events) != 1 {
		t.Fatalf("frame %+v, want index %d", f, idx)
	}
	e := f.Events[0]
	ns, _ := e.Payload["Namespace"].(map[string]any)
	if e.Topic != "Namespace" || e.Type != "NamespaceUpserted" || e.Key != "payments" || e.Index != idx || ns["Description"] != "live" {
		t.Fatalf("event %+v", e)
	}
}
