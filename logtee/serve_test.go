package logtee_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/logtee"
	"github.com/ordoplane/ordo/storage/waittest"
)

// blockedWriter is a ResponseWriter whose first Write waits for release:
// a reader that stopped reading.
type blockedWriter struct {
	header  http.Header
	ready   chan struct{} // closed at WriteHeader: Serve has subscribed
	entered chan struct{} // closed when the first Write starts
	release chan struct{}
	mu      sync.Mutex
	out     bytes.Buffer
	once    sync.Once
}

func (w *blockedWriter) Header() http.Header { return w.header }
func (w *blockedWriter) WriteHeader(int)     { close(w.ready) }
func (w *blockedWriter) Write(b []byte) (int, error) {
	w.once.Do(func() {
		close(w.entered)
		<-w.release
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(b)
}

func (w *blockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// TestServeTellsOfDroppedLines: while the reader is blocked, the agent
// logs on without waiting; lines past the buffer are dropped, and once
// the reader has caught up a line says how many.
func TestServeTellsOfDroppedLines(t *testing.T) {
	var agentOut bytes.Buffer
	tee, log := newTee(&agentOut)
	w := &blockedWriter{header: http.Header{}, ready: make(chan struct{}), entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	r := httptest.NewRequestWithContext(ctx, "GET", "/v1/agent/monitor?plain=true", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tee.Serve(w, r, logtee.Request{Level: 0, Plain: true}, time.Hour)
	}()
	<-w.ready
	log.Info("first")
	<-w.entered // Serve is stuck writing "first"
	extra := 100
	for i := range logtee.DefaultBuffer + extra {
		log.Info("queued", "i", i) // returns at once though nobody reads
	}
	close(w.release)
	waittest.For(t, 10*time.Second, "the dropped-lines warning", func() bool {
		return strings.Contains(w.String(), "dropped=")
	})
	cancel()
	<-done
	out := w.String()
	if n := strings.Count(out, `msg=queued`); n != logtee.DefaultBuffer {
		t.Errorf("%d queued lines sent, want the buffer's %d", n, logtee.DefaultBuffer)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "dropped="+strconv.Itoa(extra)) {
		t.Errorf("no warning of 100 dropped lines in the tail %q", out[max(0, len(out)-300):])
	}
	if !strings.HasPrefix(out, "time=") || !strings.Contains(out[:100], "msg=first") {
		t.Errorf("output starts %q, want the first line", out[:min(100, len(out))])
	}
}
