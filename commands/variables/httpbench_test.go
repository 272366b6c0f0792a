//go:build bench

// The HTTP benchmarks start a dev agent: built only with -tags bench (make
// bench), so that make test's test binary of this package does not link
// the whole agent (~2 CPU-s of linking for benchmarks it never runs).
// make vet checks this file with the tag.

package variables_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/waittest"
)

// benchAgent starts a dev agent (synced raft log, as in production) and
// returns its base URL once it has an active root key.
func benchAgent(b *testing.B) string {
	b.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = b.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.Scheduler.Disabled = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	a, err := agent.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Shutdown() })
	waittest.For(b, 15*time.Second, "an active root key", func() bool {
		snap := a.Store().Snapshot()
		_, err := keyring.Active(projections.NewView(snap))
		snap.Close()
		return err == nil && a.Node().IsLeader()
	})
	return "http://" + a.HTTPAddr()
}

func benchDo(b *testing.B, c *http.Client, method, url string, body []byte) {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Errorf("%s %s: %d", method, url, resp.StatusCode)
	}
}

var benchItems, _ = json.Marshal(map[string]any{"Items": map[string]string{
	"username": "app", "password": "0123456789abcdef0123456789abcdef", "url": "postgres://db.internal:5432/app"}})

// BenchmarkVariablePut: variable writes over HTTP by 32 concurrent
// clients, each to its own paths: seal, decide, raft append, apply.
func BenchmarkVariablePut(b *testing.B) {
	base := benchAgent(b)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	b.SetParallelism(16) // 32 clients on 2 cores
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchDo(b, c, "PUT", fmt.Sprintf("%s/v1/var/bench/p%d", base, n.Add(1)%1000), benchItems)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
}

// BenchmarkVariableGet: decrypted reads over HTTP by 32 concurrent clients.
func BenchmarkVariableGet(b *testing.B) {
	base := benchAgent(b)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for i := range 100 {
		benchDo(b, c, "PUT", fmt.Sprintf("%s/v1/var/bench/p%d", base, i), benchItems)
	}
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchDo(b, c, "GET", fmt.Sprintf("%s/v1/var/bench/p%d", base, n.Add(1)%100), nil)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "gets/s")
}
