package compat

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// TestServicesWithNomadClient registers service instances through the
// client route (as an ordo client does) and reads, filters, blocks on and
// deletes them with the nomad/api Go client: Services().List groups by
// namespace with the union of tags, Services().Get decodes every field,
// and Services().Delete removes one instance.
func TestServicesWithNomadClient(t *testing.T) {
	a, c := startDev(t)
	now := time.Now().UnixNano()
	seedEntry(t, a, &events.NodeRegistered{Node: events.Node{ID: "svc-node-1", Name: "svc-node-1", Datacenter: "dc1",
		Status: events.NodeStatusReady}})
	al := func(id string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "svc-eval", Name: "web.web[0]", NodeID: "svc-node-1",
			JobID: "web", TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning,
			CreateTime: now, ModifyTime: now}
	}
	seedEntry(t, a, &events.AllocsPlaced{EvalID: "svc-eval", Allocs: []events.Allocation{al("svc-alloc-1"), al("svc-alloc-2")}})
	sc, err := serverapi.New([]string{"http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	reg := func(id, alloc string, port int, tags ...string) events.ServiceRegistration {
		return events.ServiceRegistration{ID: id, ServiceName: "web", Namespace: "default", JobID: "web", AllocID: alloc,
			Address: "127.0.0.1", Port: port, Tags: tags}
	}
	idx, err := sc.RegisterServices(context.Background(), "svc-node-1", []events.ServiceRegistration{
		reg("_nomad-task-svc-alloc-1-web-http", "svc-alloc-1", 21001, "blue", "http"),
		reg("_nomad-task-svc-alloc-2-web-http", "svc-alloc-2", 21002, "green", "http")})
	if err != nil {
		t.Fatal(err)
	}

	lists, qm, err := c.Services().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].Namespace != "default" || len(lists[0].Services) != 1 ||
		lists[0].Services[0].ServiceName != "web" || !reflect.DeepEqual(lists[0].Services[0].Tags, []string{"blue", "green", "http"}) ||
		qm.LastIndex < idx {
		t.Fatalf("List = %+v (index %d)", lists, qm.LastIndex)
	}
	if all, _, err := c.Services().List(&api.QueryOptions{Namespace: "*"}); err != nil || len(all) != 1 {
		t.Fatalf("List(*) = %+v, %v", all, err)
	}

	got, qm, err := c.Services().Get("web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || qm.LastIndex != idx {
		t.Fatalf("Get = %d instances at %d, want 2 at %d", len(got), qm.LastIndex, idx)
	}
	first := got[0]
	want := api.ServiceRegistration{ID: "_nomad-task-svc-alloc-1-web-http", ServiceName: "web", Namespace: "default",
		NodeID: "svc-node-1", Datacenter: "dc1", JobID: "web", AllocID: "svc-alloc-1", Tags: []string{"blue", "http"},
		Address: "127.0.0.1", Port: 21001, CreateIndex: idx, ModifyIndex: idx}
	if !reflect.DeepEqual(*first, want) {
		t.Fatalf("Get[0] = %+v\nwant     %+v", *first, want)
	}
	green, _, err := c.Services().Get("web", &api.QueryOptions{Filter: `"green" in Tags`})
	if err != nil || len(green) != 1 || green[0].Port != 21002 {
		t.Fatalf("Get filtered = %+v, %v", green, err)
	}
	chosen, _, err := c.Services().Get("web", &api.QueryOptions{Params: map[string]string{"choose": "1|caller"}})
	if err != nil || len(chosen) != 1 {
		t.Fatalf("Get choose = %+v, %v", chosen, err)
	}

	// A blocking Get wakes when an instance goes.
	type answer struct {
		list []*api.ServiceRegistration
		qm   *api.QueryMeta
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		l, m, err := c.Services().Get("web", &api.QueryOptions{WaitIndex: idx, WaitTime: 30 * time.Second})
		ch <- answer{l, m, err}
	}()
	wm, err := c.Services().Delete("web", "_nomad-task-svc-alloc-2-web-http", nil)
	if err != nil || wm.LastIndex <= idx {
		t.Fatalf("Delete = %+v, %v", wm, err)
	}
	select {
	case ans := <-ch:
		if ans.err != nil || len(ans.list) != 1 || ans.list[0].AllocID != "svc-alloc-1" || ans.qm.LastIndex < wm.LastIndex {
			t.Fatalf("blocking Get woke with %+v, %v", ans.list, ans.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking Get never woke")
	}
	_, err = c.Services().Delete("web", "_nomad-task-svc-alloc-2-web-http", nil)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("second Delete: %v", err)
	}

	// The event stream carries both, under topic Service, decoded by
	// the client's Event.Service.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicService: {"web"}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := collect(t, stream, wm.LastIndex)
	var seen []string
	for _, e := range evs {
		sr, err := e.Service()
		if err != nil || sr == nil || sr.ServiceName != "web" {
			t.Fatalf("%s event %s: %+v, %v", e.Type, e.Key, sr, err)
		}
		seen = append(seen, e.Type+" "+e.Key)
	}
	wantEvents := []string{"ServiceRegistration _nomad-task-svc-alloc-1-web-http", "ServiceRegistration _nomad-task-svc-alloc-2-web-http",
		"ServiceDeregistration _nomad-task-svc-alloc-2-web-http"}
	if !reflect.DeepEqual(seen, wantEvents) {
		t.Fatalf("stream: %v\nwant    %v", seen, wantEvents)
	}
}
