package logtee_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/logtee"
)

// newTee returns a tee over a text handler at info writing to out.
func newTee(out *bytes.Buffer) (*logtee.Tee, *slog.Logger) {
	tee := logtee.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return tee, slog.New(tee)
}

// next returns the subscription's next line, failing when none is queued.
func next(t *testing.T, s *logtee.Subscription) string {
	t.Helper()
	select {
	case l := <-s.Lines():
		return string(l)
	default:
		t.Fatal("no line queued")
		return ""
	}
}

func empty(t *testing.T, s *logtee.Subscription) {
	t.Helper()
	select {
	case l := <-s.Lines():
		t.Fatalf("unexpected line %q", l)
	default:
	}
}

func TestLevels(t *testing.T) {
	var out bytes.Buffer
	_, log := newTee(&out)
	tee := log.Handler().(*logtee.Tee)
	debug := tee.Subscribe(logtee.Options{Level: slog.LevelDebug})
	warn := tee.Subscribe(logtee.Options{Level: slog.LevelWarn, JSON: true})
	defer debug.Close()
	defer warn.Close()

	log.With("server", "s1").WithGroup("g").Debug("below the agent's level", "k", 1)
	log.Warn("a warning")

	if got := next(t, debug); !strings.Contains(got, `msg="below the agent's level" server=s1 g.k=1`) {
		t.Errorf("debug subscriber's first line = %q", got)
	}
	if got := next(t, debug); !strings.Contains(got, "level=WARN") {
		t.Errorf("debug subscriber's second line = %q", got)
	}
	empty(t, debug)
	var rec map[string]any
	if err := json.Unmarshal([]byte(next(t, warn)), &rec); err != nil || rec["msg"] != "a warning" {
		t.Errorf("warn subscriber's line = %v (%v), want the warning as JSON", rec, err)
	}
	empty(t, warn)
	if strings.Contains(out.String(), "below the agent's level") || !strings.Contains(out.String(), "a warning") {
		t.Errorf("the agent's own output = %q: want the warning only", out.String())
	}
}

func TestDropsWhenTheReaderFallsBehind(t *testing.T) {
	var out bytes.Buffer
	tee, log := newTee(&out)
	reg := prometheus.NewRegistry()
	if err := tee.Register(reg); err != nil {
		t.Fatal(err)
	}
	s := tee.Subscribe(logtee.Options{Buffer: 2})
	if got := value(t, reg, subscribersMetric); got != 1 {
		t.Errorf("subscribers = %v, want 1", got)
	}
	for i := range 5 { // nobody reads: logging must not wait
		log.Info("line", "i", i)
	}
	if got := s.Dropped(); got != 3 {
		t.Errorf("Dropped = %d, want 3", got)
	}
	if got := s.Dropped(); got != 0 {
		t.Errorf("Dropped again = %d, want 0 (counted from zero)", got)
	}
	if got := next(t, s); !strings.Contains(got, "i=0") {
		t.Errorf("first line = %q, want the oldest kept", got)
	}
	if got := string(s.DroppedLine(3)); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "dropped=3") {
		t.Errorf("DroppedLine = %q", got)
	}
	if got := value(t, reg, droppedMetric); got != 3 {
		t.Errorf("dropped lines counter = %v, want 3", got)
	}
	s.Close()
	s.Close() // twice is fine
	if got := value(t, reg, subscribersMetric); got != 0 {
		t.Errorf("subscribers after Close = %v, want 0", got)
	}
}

func TestUnsubscribe(t *testing.T) {
	var out bytes.Buffer
	tee, log := newTee(&out)
	s := tee.Subscribe(logtee.Options{Level: slog.LevelDebug})
	if !tee.Enabled(t.Context(), slog.LevelDebug) {
		t.Fatal("debug not enabled with a debug subscriber")
	}
	s.Close()
	if tee.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("debug still enabled after the only debug subscriber left")
	}
	log.Info("after close")
	empty(t, s)
}

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		q     string
		want  logtee.Request
		field string
	}{
		{"", logtee.Request{Level: slog.LevelInfo}, ""},
		{"log_level=DEBUG&log_json=true", logtee.Request{Level: slog.LevelDebug, JSON: true}, ""},
		{"log_level=trace&plain=true", logtee.Request{Level: logtee.LevelTrace, Plain: true}, ""},
		{"log_level=loud", logtee.Request{}, "log_level"},
		{"plain=maybe", logtee.Request{}, "plain"},
	} {
		q, _ := parseQuery(tc.q)
		got, err := logtee.ParseRequest(q)
		if tc.field != "" {
			pe, ok := err.(*logtee.ParamError)
			if !ok || pe.Field != tc.field {
				t.Errorf("%q: err = %v, want one naming %s", tc.q, err, tc.field)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q = %+v, %v; want %+v", tc.q, got, err, tc.want)
		}
	}
}

// TestServe reads frames from Serve as the nomad/api client does, and
// plain lines.
func TestServe(t *testing.T) {
	var out bytes.Buffer
	tee, log := newTee(&out)
	reg := prometheus.NewRegistry()
	if err := tee.Register(reg); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := logtee.ParseRequest(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tee.Serve(w, r, req, time.Hour)
	}))
	defer srv.Close()
	for _, plain := range []bool{false, true} {
		q := "?log_level=debug"
		if plain {
			q += "&plain=true"
		}
		resp, err := http.Get(srv.URL + q) // answered once subscribed: headers come first
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hello monitor", "plain", plain)
		rd := bufio.NewReader(resp.Body)
		line, err := rd.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		got := string(line)
		if !plain {
			var f struct{ Data []byte }
			if err := json.Unmarshal(line, &f); err != nil {
				t.Fatalf("frame %q: %v", line, err)
			}
			got = string(f.Data)
		}
		if !strings.Contains(got, "hello monitor") || !strings.HasSuffix(got, "\n") {
			t.Errorf("plain=%v: line %q", plain, got)
		}
		resp.Body.Close()
	}
	// Both readers left: Serve closed their subscriptions.
	if !pollGauge(t, reg, 0) {
		t.Error("subscribers did not return to 0 after the readers left")
	}
}
