package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/commands/httpapi"
)

// fuzzSecret is FuzzJoinRequest's cluster secret.
const fuzzSecret = "fuzz-cluster-secret-0123456789"

// FuzzJoinRequest fuzzes the body of PUT /v1/operator/raft/join. The join
// hook is a fake, so fuzzed addresses never reach raft. The handler never
// panics; it answers 200 after calling the hook exactly when the body is a
// JSON object (within the limit) naming ID, RaftAddr and HTTPAddr, with the
// values encoding/json reads from it, and otherwise 400 or 413 with a JSON
// error, without calling the hook. The same body without the cluster
// secret is refused 403, without calling the hook.
func FuzzJoinRequest(f *testing.F) {
	// A small limit keeps minimizing an over-the-limit input cheap: it
	// cannot shrink, and each attempt costs a run.
	const limit = 128
	d := startAgent(f)
	var (
		mu    sync.Mutex
		calls []httpapi.JoinRequest
	)
	api := newAPI(f, d, httpapi.Config{
		BodyLimit: limit, ClusterSecret: fuzzSecret,
		Join: func(_ context.Context, req httpapi.JoinRequest) (httpapi.JoinResponse, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, req)
			return httpapi.JoinResponse{Known: []httpapi.JoinRequest{req}, Leader: "leader"}, nil
		},
	})
	for _, s := range []string{
		`{"ID":"a","RaftAddr":"127.0.0.1:4647","HTTPAddr":"127.0.0.1:4646"}`,
		`{"id":"a","raftaddr":"r","httpaddr":"h","Extra":[1,2]}`,
		`{"ID":"a","RaftAddr":"r"}`, `{"ID":7}`, `{}`, `null`, `[]`, ``, `{"ID":`,
		`{"ID":"a","RaftAddr":"r","HTTPAddr":"h"} {}`, `{"ID":"\u0000","RaftAddr":"\ud800","HTTPAddr":" "}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		mu.Lock()
		calls = calls[:0]
		mu.Unlock()
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("PUT", "/v1/operator/raft/join", bytes.NewReader(body)))
		mu.Lock()
		if len(calls) != 0 || w.Code != http.StatusForbidden {
			t.Fatalf("join without the cluster secret: %d %s, hook called %d times", w.Code, w.Body.Bytes(), len(calls))
		}
		mu.Unlock()
		w = httptest.NewRecorder()
		req := httptest.NewRequest("PUT", "/v1/operator/raft/join", bytes.NewReader(body))
		req.Header.Set(httpapi.ClusterSecretHeader, fuzzSecret)
		api.ServeHTTP(w, req)
		mu.Lock()
		got := append([]httpapi.JoinRequest(nil), calls...)
		mu.Unlock()

		var want httpapi.JoinRequest
		ok := len(body) <= limit && json.Unmarshal(body, &want) == nil &&
			want.ID != "" && want.RaftAddr != "" && want.HTTPAddr != ""
		if !ok {
			if len(got) != 0 {
				t.Fatalf("hook called with %+v for refused body %q", got, body)
			}
			var e apiError
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
				t.Fatalf("error body %q: %v", w.Body.Bytes(), err)
			}
			switch {
			case w.Code == http.StatusRequestEntityTooLarge && len(body) > limit:
			case w.Code == http.StatusBadRequest && len(body) <= limit && e.Field != "":
			default:
				t.Fatalf("%d %s for %d-byte body %q", w.Code, w.Body.Bytes(), len(body), body)
			}
			if e.Status != w.Code || e.Error == "" {
				t.Fatalf("error body %s for status %d", w.Body.Bytes(), w.Code)
			}
			return
		}
		if w.Code != http.StatusOK {
			t.Fatalf("valid join %q answered %d %s", body, w.Code, w.Body.Bytes())
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("hook called with %+v, want %+v", got, want)
		}
		var resp httpapi.JoinResponse
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(resp, httpapi.JoinResponse{Known: []httpapi.JoinRequest{want}, Leader: "leader"}) {
			t.Fatalf("response %+v", resp)
		}
	})
}
