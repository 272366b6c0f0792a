package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/storage/nettest"
)

func quiet() api.Option { return api.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// A request carries the token, the client's namespace and parameters
// where the request names none, and a JSON body.
func TestRequestShape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch {
		case r.Method != "PUT", r.URL.EscapedPath() != "/v1/var/a%2Fb",
			r.Header.Get("X-Nomad-Token") != "secret", r.Header.Get("User-Agent") != "test/1",
			r.Header.Get("Content-Type") != "application/json", r.Header.Get("X-Extra") != "x",
			q.Get("namespace") != "own", q.Get("region") != "r1", q.Get("at_index") != "7", body["Items"] != "v":
			t.Errorf("request %s %s %v %v %v", r.Method, r.URL, r.Header, q, body)
		}
		writeJSON(w, 200, map[string]any{"Index": 3})
	}))
	defer srv.Close()
	c, err := api.New([]string{srv.URL}, api.WithToken("secret"), api.WithNamespace("default"), api.WithRegion("r1"),
		api.WithParams(url.Values{"at_index": {"7"}}), api.WithUserAgent("test/1"), api.WithHeader("X-Extra", "x"), quiet())
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Index uint64 }
	if err := c.Call(context.Background(), "PUT", api.Pathf("/v1/var/%s", "a/b"), url.Values{"namespace": {"own"}},
		map[string]string{"Items": "v"}, &out); err != nil || out.Index != 3 {
		t.Fatalf("call: %+v %v", out, err)
	}
}

// A blocking query sends index and wait and answers the index and next
// token of the answer.
func TestQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("index") != "5" || q.Get("wait") != "2s" || !q.Has("stale") || q.Get("namespace") != "prod" {
			t.Errorf("query %v", q)
		}
		w.Header().Set("X-Nomad-Index", "9")
		w.Header().Set("X-Nomad-NextToken", "n1")
		writeJSON(w, 200, []string{"a"})
	}))
	defer srv.Close()
	c, _ := api.New([]string{srv.URL}, quiet())
	var list []string
	meta, err := c.Query(context.Background(), "/v1/jobs", &api.QueryOptions{Namespace: "prod", Index: 5, Wait: 2 * time.Second, Stale: true}, &list)
	if err != nil || meta.LastIndex != 9 || meta.NextToken != "n1" || len(list) != 1 {
		t.Fatalf("query: %+v %v %v", meta, list, err)
	}
}

// A 4xx answer is an *Error with the body's fields, returned at once.
func TestErrorBody(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		writeJSON(w, 400, api.ErrorBody{Error: "invalid Name", Field: "Name", Reason: "too long", Status: 400})
	}))
	defer srv.Close()
	c, _ := api.New([]string{srv.URL, srv.URL}, quiet())
	err := c.Put(context.Background(), "/v1/namespace/x", map[string]string{}, nil)
	e, ok := errors.AsType[*api.Error](err)
	if !ok || e.Status != 400 || e.Field != "Name" || e.Reason != "too long" || e.Message != "invalid Name" || hits != 1 {
		t.Fatalf("err %#v (%d hits)", err, hits)
	}
	if errors.Is(err, api.ErrNoServers) {
		t.Error("a 400 is an answer")
	}
}

// An answer that is not an error body keeps its status and text.
func TestPlainError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", 404)
	}))
	defer srv.Close()
	c, _ := api.New([]string{srv.URL}, quiet())
	err := c.Get(context.Background(), "/v1/x", nil, nil)
	if !api.IsNotFound(err) || err.Error() != "unexpected response 404: bad gateway" {
		t.Fatalf("err %v", err)
	}
}

// A call moves past servers that are down or answer 5xx, and the next
// call starts with the server that answered; when none answers the error
// wraps ErrNoServers and each server's error.
func TestFailover(t *testing.T) {
	var hits []string
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, "503")
		writeJSON(w, 503, api.ErrorBody{Error: "no leader", Status: 503})
	}))
	defer unavailable.Close()
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits = append(hits, "good")
		b, _ := io.ReadAll(r.Body)
		if string(b) != "payload" {
			t.Errorf("body %q", b)
		}
		writeJSON(w, 200, map[string]any{})
	}))
	defer good.Close()
	c, _ := api.New([]string{nettest.ClosedAddr(t), unavailable.URL, good.URL}, quiet())
	for range 2 {
		if err := c.Put(context.Background(), "/v1/x", strings.NewReader("payload"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(hits) != 3 || hits[0] != "503" || hits[1] != "good" || hits[2] != "good" {
		t.Errorf("hits %v", hits)
	}
	c, _ = api.New([]string{nettest.ClosedAddr(t), unavailable.URL}, quiet())
	err := c.Get(context.Background(), "/v1/x", nil, nil)
	if e, ok := errors.AsType[*api.Error](err); !errors.Is(err, api.ErrNoServers) || !ok || e.Status != 503 {
		t.Fatalf("err %v", err)
	}
}

// Stream hands back the body unread; an undecodable answer wraps ErrDecode.
func TestStreamAndDecode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "line 1\nline 2\n")
	}))
	defer srv.Close()
	c, _ := api.New([]string{srv.URL}, quiet())
	body, err := c.Stream(context.Background(), "/v1/event/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	body.Close()
	if string(b) != "line 1\nline 2\n" {
		t.Errorf("stream %q", b)
	}
	var out map[string]any
	if err := c.Get(context.Background(), "/v1/x", nil, &out); !errors.Is(err, api.ErrDecode) {
		t.Errorf("decode: %v", err)
	}
}

func TestNewRejectsBadAddresses(t *testing.T) {
	for _, addrs := range [][]string{nil, {"ftp://x"}, {"http://"}} {
		if _, err := api.New(addrs); err == nil {
			t.Errorf("%v: no error", addrs)
		}
	}
	if got, err := api.BaseURL("10.0.0.1:4646/"); err != nil || got != "http://10.0.0.1:4646" {
		t.Errorf("BaseURL: %q %v", got, err)
	}
}
