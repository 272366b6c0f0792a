package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// collect reads the stream until a frame at or past index until arrives
// and returns every event read, failing on a stream error or at the
// deadline.
func collect(t *testing.T, stream <-chan *api.Events, until uint64) (evs []api.Event, first uint64) {
	t.Helper()
	deadline := time.After(testagent.ServerTimeout)
	for {
		select {
		case f, ok := <-stream:
			if !ok {
				t.Fatal("stream closed")
			}
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if first == 0 {
				first = f.Index
			}
			for _, e := range f.Events {
				if e.Index != f.Index {
					t.Fatalf("event %s/%s at index %d in frame %d", e.Topic, e.Key, e.Index, f.Index)
				}
			}
			evs = append(evs, f.Events...)
			if f.Index >= until {
				return evs, first
			}
		case <-deadline:
			t.Fatalf("no frame at index %d; read %d events", until, len(evs))
		}
	}
}

// TestEventStreamNomadShape drives a job's life — register, placement, the
// client's reports, a drain, a stop, a purge — and reads it back with the
// real client's EventStream: every event decodes its entity under its
// topic, keyed by the entity's id; index 0 returns what was written before
// the stream opened; topic=Job:<id> selects one job; a deployment's and
// an allocation's events match their job by FilterKeys.
func TestEventStreamNomadShape(t *testing.T) {
	cfg := testagent.DevConfig(t.TempDir())
	testagent.QuietNodes(&cfg)
	a, c := testagent.StartDev(t, cfg)
	testagent.ReadyNode(t, a.HTTPAddr(), "n1", 4000, 8192)

	web := serviceJob("web", 2)
	web.Update = &api.UpdateStrategy{MinHealthyTime: pointer(time.Millisecond), HealthyDeadline: pointer(time.Minute)}
	testagent.Register(t, c, web)
	testagent.Register(t, c, serviceJob("other", 1))
	testagent.Register(t, c, serviceJob("other", 2)) // version 1
	if _, err := c.NodePools().Register(&api.NodePool{Name: "gpu"}, nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	testagent.WaitFor(t, testagent.ServerTimeout, "web's two allocations", func() bool {
		list, _, err := c.Jobs().Allocations("web", false, nil)
		ids = ids[:0]
		for _, al := range list {
			ids = append(ids, al.ID)
		}
		return err == nil && len(ids) == 2
	})
	reportRunning(t, a.HTTPAddr(), "n1", ids)
	if _, err := c.Nodes().UpdateDrain("n1", &api.DrainSpec{Deadline: time.Hour}, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	_, wm, err := c.Jobs().Deregister("other", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := wm.LastIndex
	// A namespace written last ends each read: filtered streams ask for
	// its topic too, and stop at its frame.
	wm, err = c.Namespaces().Register(&api.Namespace{Name: "end"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := wm.LastIndex
	upTo := func(topics map[api.Topic][]string, index uint64) ([]api.Event, uint64) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if topics != nil {
			topics["Namespace"] = []string{"end"}
		}
		stream, err := c.EventStream().Stream(ctx, topics, index, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs, first := collect(t, stream, end)
		var kept []api.Event
		for _, e := range evs {
			if topics == nil || e.Topic != "Namespace" {
				kept = append(kept, e)
			}
		}
		return kept, first
	}

	evs, first := upTo(nil, 0)
	if first > 10 {
		t.Errorf("index 0 started at index %d, not at the oldest entry", first)
	}
	types := map[string]bool{}
	byTopic := map[api.Topic]int{}
	for _, e := range evs {
		types[string(e.Topic)+"/"+e.Type] = true
		byTopic[e.Topic]++
		var id string
		switch e.Topic {
		case api.TopicJob:
			j, err := e.Job()
			if err != nil || j == nil {
				t.Fatalf("%s %s: Job() = %v, %v; payload %v", e.Type, e.Key, j, err, e.Payload)
			}
			id = *j.ID
		case api.TopicAllocation:
			al, err := e.Allocation()
			if err != nil || al == nil {
				t.Fatalf("%s %s: Allocation() = %v, %v; payload %v", e.Type, e.Key, al, err, e.Payload)
			}
			id = al.ID
			if len(e.FilterKeys) == 0 || e.FilterKeys[0] != al.JobID {
				t.Errorf("allocation %s: FilterKeys %v, want its job %s first", al.ID, e.FilterKeys, al.JobID)
			}
		case api.TopicEvaluation:
			ev, err := e.Evaluation()
			if err != nil || ev == nil {
				t.Fatalf("%s %s: Evaluation() = %v, %v; payload %v", e.Type, e.Key, ev, err, e.Payload)
			}
			id = ev.ID
		case api.TopicDeployment:
			d, err := e.Deployment()
			if err != nil || d == nil {
				t.Fatalf("%s %s: Deployment() = %v, %v; payload %v", e.Type, e.Key, d, err, e.Payload)
			}
			id = d.ID
		case api.TopicNodePool:
			p, err := e.NodePool()
			if err != nil || p == nil {
				t.Fatalf("%s %s: NodePool() = %v, %v; payload %v", e.Type, e.Key, p, err, e.Payload)
			}
			id = p.Name
		case api.TopicNode:
			n, err := e.Node()
			if err != nil || n == nil {
				t.Fatalf("%s %s: Node() = %v, %v; payload %v", e.Type, e.Key, n, err, e.Payload)
			}
			id = n.ID
		default:
			continue
		}
		if e.Key != id {
			t.Errorf("%s %s: Key %q, the entity's id is %q", e.Topic, e.Type, e.Key, id)
		}
	}
	for _, want := range []string{"Job/JobRegistered", "Job/JobDeregistered", "Evaluation/JobRegistered",
		"Allocation/PlanResult", "Allocation/AllocationUpdated", "Deployment/JobRegistered",
		"Node/NodeRegistration", "Node/NodeDrain", "NodePool/NodePoolUpserted"} {
		if !types[want] {
			t.Errorf("no %s event; saw %v", want, types)
		}
	}
	if t.Failed() {
		return
	}

	// topic=Job:web: web's job events only, its stop among them.
	evs, _ = upTo(map[api.Topic][]string{api.TopicJob: {"web"}}, 0)
	var stopped bool
	for _, e := range evs {
		if e.Topic != api.TopicJob || e.Key != "web" {
			t.Fatalf("topic=Job:web sent %s %s %s", e.Topic, e.Type, e.Key)
		}
		j, _ := e.Job()
		stopped = stopped || e.Type == "JobDeregistered" && j != nil && *j.Stop
	}
	if len(evs) < 2 || !stopped {
		t.Fatalf("topic=Job:web: %d events, stop seen %v", len(evs), stopped)
	}

	// Each event carries the job as it stood at its index: versions 0
	// and 1, then the purge, with the job as it was before it.
	evs, _ = upTo(map[api.Topic][]string{api.TopicJob: {"other"}}, 0)
	var seen []string
	for _, e := range evs {
		j, deleted, err := e.DeregisteredJob()
		if err != nil || j == nil || *j.ID != "other" {
			t.Fatalf("%s: %v %v", e.Type, j, err)
		}
		seen = append(seen, fmt.Sprintf("%s v%d deleted=%v", e.Type, *j.Version, deleted))
	}
	if got := strings.Join(seen, ", "); got != "JobRegistered v0 deleted=false, JobRegistered v1 deleted=false, JobDeregistered v1 deleted=true" {
		t.Fatalf("other's events: %s", got)
	}
	// index=N starts at N, as Nomad's: the purge's own frame first.
	evs, first = upTo(map[api.Topic][]string{api.TopicJob: {"other"}}, last)
	if first != last || len(evs) != 1 || evs[0].Type != "JobDeregistered" {
		t.Fatalf("index=%d: first frame %d, events %+v", last, first, evs)
	}

	// topic=Allocation:web matches web's allocations by their FilterKeys.
	evs, _ = upTo(map[api.Topic][]string{api.TopicAllocation: {"web"}}, 0)
	if len(evs) == 0 {
		t.Fatal("topic=Allocation:web sent nothing")
	}
	for _, e := range evs {
		al, _ := e.Allocation()
		if e.Topic != api.TopicAllocation || al == nil || al.JobID != "web" {
			t.Fatalf("topic=Allocation:web sent %s %s %s", e.Topic, e.Type, e.Key)
		}
	}
}
