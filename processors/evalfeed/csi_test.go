package evalfeed_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/evalfeed"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestUnblockOnFreedClaim (N22): a blocked eval waiting for a CSI claim
// that clears by itself (it escaped computed classes) is unblocked when
// the volume watcher frees the claim; an eval whose class cannot run on
// the claim's node is not.
func TestUnblockOnFreedClaim(t *testing.T) {
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	b, err := broker.New(broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := &recorder{unblocks: make(chan []string, 10)}
	started := make(chan struct{})
	f, err := evalfeed.New(evalfeed.Config{Broker: b, Pipeline: rec, Store: store, Notifier: fsm.Notifier(),
		Restore: func(projections.View) (pending, blocked []*events.Evaluation, err error) {
			close(started)
			return nil, nil, nil
		},
		PollFailed: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n1 := node("n1", "small")
	index := uint64(0)
	apply := func(ps ...events.Payload) uint64 {
		index++
		pt.ApplyOne(t, fsm, index, pt.Entry(t, fmt.Sprintf("c%d", index), ps...))
		return index
	}
	vol := &events.CSIVolumeRegistered{Volume: events.CSIVolume{ID: "db", Namespace: "default", PluginID: "p",
		RequestedCapabilities: []events.CSIVolumeCapability{{AccessMode: events.CSIAccessSingleNodeWriter, AttachmentMode: events.CSIAttachmentFilesystem}}}}
	job := &events.JobRegistered{Job: events.Job{ID: "holder", Namespace: "default", Type: events.JobTypeService,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 1, Volumes: map[string]*events.VolumeRequest{"d": {Name: "d",
			Type: events.VolumeTypeCSI, Source: "db", AccessMode: events.CSIAccessSingleNodeWriter}}}}}}
	at := apply(n1, vol, job)
	apply(&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "holder",
		TaskGroup: "g", NodeID: "n1", Name: "holder.g[0]", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}}})
	apply(&events.AllocsDeleted{IDs: []string{"a1"}}) // GC'd: the claim clears by itself

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	<-started
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{
		blocked("waits-for-volume", at, true, map[string]bool{classOf(n1): true}),
		blocked("never-small", at, false, map[string]bool{classOf(n1): false}),
	}})
	apply(&events.CSIVolumeClaimsUpdated{Namespace: "default", VolumeID: "db", Claims: []events.CSIVolumeClaim{{AllocID: "a1",
		NodeID: "n1", Mode: events.CSIClaimWrite, State: events.CSIClaimFreed}}})
	select {
	case ids := <-rec.unblocks:
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"waits-for-volume"}) {
			t.Fatalf("unblocked %v, want [waits-for-volume]", ids)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the freed claim unblocked nothing")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
