package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordoplane/ordo/storage/waittest"
)

// TestConsumesCommittedAndDeduplicates produces mirror-shaped records (one
// of them twice, as a rebalance might replay it) and checks the JSON lines.
func TestConsumesCommittedAndDeduplicates(t *testing.T) {
	k, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ordo.events"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(k.ListenAddrs()...), kgo.DefaultProduceTopic("ordo.events"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := func(index, seq string) *kgo.Record {
		return &kgo.Record{Key: []byte("namespace/a"), Value: []byte(`{"Index":` + index + `,"Seq":` + seq + `}`),
			Headers: []kgo.RecordHeader{{Key: "ordo-index", Value: []byte(index)}, {Key: "ordo-seq", Value: []byte(seq)},
				{Key: "content-type", Value: []byte("application/json")}}}
	}
	if err := p.ProduceSync(t.Context(), rec("1", "0"), rec("1", "1"), rec("1", "1"), rec("2", "0")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "events.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, k.ListenAddrs(), "ordo.events", "g", out, true, 1) }()
	want := "{\"Index\":1,\"Seq\":0}\n{\"Index\":1,\"Seq\":1}\n{\"Index\":2,\"Seq\":0}\n"
	var b []byte
	waittest.Poll(30*time.Second, func() bool {
		b, _ = os.ReadFile(out)
		return bytes.Equal(b, []byte(want)) || strings.Count(string(b), "\n") > 3
	})
	if !bytes.Equal(b, []byte(want)) {
		t.Fatalf("wrote %q, want %q", b, want)
	}
	cancel()
	<-done
}
