package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	ps "github.com/ordoplane/ordo/projections/services"
)

func svcReg(id, name, alloc string, port int, tags ...string) events.ServiceRegistration {
	return events.ServiceRegistration{ID: id, ServiceName: name, Namespace: "default", JobID: "web", AllocID: alloc,
		Address: "10.0.0.1", Port: port, Tags: tags}
}

func regIDs(list []events.ServiceRegistration) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

// serviceAgent starts an agent with node n1 and four allocations of job
// web on it, and a server API client for the node's calls.
func serviceAgent(t *testing.T) (*devAgent, *serverapi.Client) {
	t.Helper()
	d := startAgent(t)
	d.register(t, "n1")
	d.register(t, "n2")
	d.seed(t, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("a1", "n1", "web", "e1"),
		testAlloc("a2", "n1", "web", "e1"), testAlloc("a3", "n1", "web", "e1"), testAlloc("b1", "n2", "web", "e1")}})
	c, err := serverapi.New([]string{d.base})
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// TestServicesOverHTTP: a node registers instances through the client
// route; GET /v1/services groups them by namespace with their tags, GET
// /v1/service/:name lists them, filters them and chooses among them
// stably; a bad registration is a 400 naming the field and appends
// nothing, as does an update that changes nothing; a user's DELETE and a
// client's deregistration remove instances, and a client reporting its
// allocation complete removes that allocation's in the same entry.
func TestServicesOverHTTP(t *testing.T) {
	t.Parallel()
	d, c := serviceAgent(t)
	ctx := context.Background()
	regs := []events.ServiceRegistration{svcReg("w1", "web", "a1", 8080, "v1"), svcReg("w2", "web", "a2", 8081, "v2"),
		svcReg("w3", "web", "a3", 8082, "v1"), svcReg("d1", "db", "a1", 5432)}
	idx, err := c.RegisterServices(ctx, "n1", regs)
	if err != nil || idx == 0 {
		t.Fatalf("register: %d %v", idx, err)
	}
	var lists []struct {
		Namespace string
		Services  []struct {
			ServiceName string
			Tags        []string
		}
	}
	d.getJSON(t, "/v1/services", &lists)
	if b, _ := json.Marshal(lists); string(b) != `[{"Namespace":"default","Services":[{"ServiceName":"db","Tags":[]},{"ServiceName":"web","Tags":["v1","v2"]}]}]` {
		t.Fatalf("services = %s", b)
	}
	d.getJSON(t, "/v1/services?namespace=*", &lists)
	if len(lists) != 1 {
		t.Fatalf("namespace=*: %+v", lists)
	}
	var list []events.ServiceRegistration
	r := d.getJSON(t, "/v1/service/web", &list)
	if got := regIDs(list); !reflect.DeepEqual(got, []string{"w1", "w2", "w3"}) || r.index(t) != idx {
		t.Fatalf("web = %v at %d, want w1-3 at %d", got, r.index(t), idx)
	}
	if list[0].NodeID != "n1" || list[0].Datacenter != "dc1" || list[0].CreateIndex != idx || list[0].Port != 8080 {
		t.Fatalf("w1 = %+v", list[0])
	}
	d.getJSON(t, "/v1/service/web?filter="+url.QueryEscape(`Port == 8081`), &list)
	if got := regIDs(list); !reflect.DeepEqual(got, []string{"w2"}) {
		t.Fatalf("filtered: %v", got)
	}
	d.getJSON(t, "/v1/service/web?choose="+url.QueryEscape("2|client-a"), &list)
	chosen := regIDs(list)
	if len(chosen) != 2 {
		t.Fatalf("choose 2: %v", chosen)
	}
	for range 3 {
		if d.getJSON(t, "/v1/service/web?choose="+url.QueryEscape("2|client-a"), &list); !reflect.DeepEqual(regIDs(list), chosen) {
			t.Fatalf("choose is not stable: %v then %v", chosen, regIDs(list))
		}
	}
	d.wantBadParams(t, "/v1/service/web?", []struct{ query, field string }{
		{"choose=x", "choose"}, {"choose=0|k", "choose"}, {"choose=2", "choose"}, {"filter=%3D%3D", "filter"},
		{"namespace=*", "namespace"}})

	// Bad registrations name their field; nothing reaches the log.
	before := d.archiveLen(t)
	for _, tc := range []struct {
		mut   func(*events.ServiceRegistration)
		field string
	}{
		{func(s *events.ServiceRegistration) { s.Port = 70000 }, "Services[0].Port"},
		{func(s *events.ServiceRegistration) { s.Address = "" }, "Services[0].Address"},
		{func(s *events.ServiceRegistration) { s.ServiceName = "" }, "Services[0].ServiceName"},
		{func(s *events.ServiceRegistration) { s.AllocID = "b1" }, "Services[0].AllocID"},
		{func(s *events.ServiceRegistration) { s.AllocID = "nope" }, "Services[0].AllocID"},
		{func(s *events.ServiceRegistration) { s.JobID = "other" }, "Services[0].JobID"},
		{func(s *events.ServiceRegistration) { s.Namespace = "prod" }, "Services[0].Namespace"},
	} {
		s := svcReg("x1", "web", "a1", 9000)
		tc.mut(&s)
		_, err := c.RegisterServices(ctx, "n1", []events.ServiceRegistration{s})
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	// An update that changes nothing appends nothing.
	if _, err := c.RegisterServices(ctx, "n1", regs[:2]); err != nil {
		t.Fatal(err)
	}
	if after := d.archiveLen(t); after != before {
		t.Fatalf("refused or unchanged registrations appended %d events", after-before)
	}

	// A user deletes one instance; a second delete is a 404.
	if r := d.do(t, "DELETE", "/v1/service/web/w3", nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := d.do(t, "DELETE", "/v1/service/web/w3", nil); r.status != 404 {
		t.Fatalf("second delete: %d %s", r.status, r.body)
	}
	if r := d.do(t, "DELETE", "/v1/service/db/w2", nil); r.status != 404 {
		t.Fatalf("delete under another name: %d %s", r.status, r.body)
	}
	// The client deregisters w2 (and an id already gone).
	if _, err := c.DeregisterServices(ctx, "n1", []string{"w2", "w3"}); err != nil {
		t.Fatal(err)
	}
	// a1 completes: its web and db instances go in the same entry.
	upd := d.do(t, "PUT", "/v1/client/n1/allocs", strings.NewReader(`{"Allocs":[{"ID":"a1","ClientStatus":"complete"}]}`))
	if upd.status != 200 {
		t.Fatalf("alloc update: %d %s", upd.status, upd.body)
	}
	d.getJSON(t, "/v1/service/web", &list)
	if len(list) != 0 {
		t.Fatalf("web after cleanup: %v", regIDs(list))
	}
	d.getJSON(t, "/v1/services", &lists)
	if len(lists) != 0 {
		t.Fatalf("services after cleanup: %+v", lists)
	}
	// The history of an instance shows when it appeared and went.
	hist := d.do(t, "GET", "/v1/history/service/d1", nil)
	if hist.status != 200 || !strings.Contains(string(hist.body), "ServicesRegistered") ||
		!strings.Contains(string(hist.body), "ServicesDeregistered") || !strings.Contains(string(hist.body), "alloc terminal") {
		t.Fatalf("history of d1: %d %s", hist.status, hist.body)
	}
}

// TestServiceBlockingQuery: a blocking read of a service wakes when an
// instance of it registers (and not on another service's change), with
// the new instance and the new index.
func TestServiceBlockingQuery(t *testing.T) {
	t.Parallel()
	d, c := serviceAgent(t)
	ctx := context.Background()
	idx, err := c.RegisterServices(ctx, "n1", []events.ServiceRegistration{svcReg("w1", "web", "a1", 8080)})
	if err != nil {
		t.Fatal(err)
	}
	list, at, err := c.Service(ctx, "default", "web", 0, 0)
	if err != nil || at != idx || len(list) != 1 {
		t.Fatalf("service: %v at %d, %v", regIDs(list), at, err)
	}
	type answer struct {
		list []events.ServiceRegistration
		at   uint64
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		l, i, err := c.Service(ctx, "default", "web", at, 20*time.Second)
		ch <- answer{l, i, err}
	}()
	d.waitGauge(t, "ordo_blocking_queries_open", 1)
	if _, err := c.RegisterServices(ctx, "n1", []events.ServiceRegistration{svcReg("d1", "db", "a2", 5432)}); err != nil {
		t.Fatal(err)
	}
	d.waitFor(t, "db registered", func(v projections.View) bool {
		_, err := ps.Get(v, "d1")
		return err == nil
	})
	select {
	case a := <-ch:
		t.Fatalf("woke on another service's change: %v", regIDs(a.list))
	default:
	}
	next, err := c.RegisterServices(ctx, "n1", []events.ServiceRegistration{svcReg("w2", "web", "a2", 8081)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-ch:
		if a.err != nil || a.at != next || !reflect.DeepEqual(regIDs(a.list), []string{"w1", "w2"}) {
			t.Fatalf("woke with %v at %d (%v), want w1 w2 at %d", regIDs(a.list), a.at, a.err, next)
		}
	case <-time.After(testTimeout):
		t.Fatal("the blocking read never woke")
	}
	// The last instance going wakes a reader too.
	ch2 := make(chan answer, 1)
	go func() {
		l, i, err := c.Service(ctx, "default", "db", next, 20*time.Second)
		ch2 <- answer{l, i, err}
	}()
	d.waitGauge(t, "ordo_blocking_queries_open", 1)
	if _, err := c.DeregisterServices(ctx, "n1", []string{"d1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-ch2:
		if a.err != nil || len(a.list) != 0 || a.at <= next {
			t.Fatalf("db woke with %v at %d (%v)", regIDs(a.list), a.at, a.err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the blocking read of a service losing its last instance never woke")
	}
}

// TestServiceEventStream: Nomad's stream carries topic Service, a
// registration as ServiceRegistration and its removal (here by its
// allocation completing) as ServiceDeregistration with the instance as
// it stood.
func TestServiceEventStream(t *testing.T) {
	t.Parallel()
	d, c := serviceAgent(t)
	ctx := context.Background()
	reg, err := c.RegisterServices(ctx, "n1", []events.ServiceRegistration{svcReg("w1", "web", "a1", 8080)})
	if err != nil {
		t.Fatal(err)
	}
	upd := d.do(t, "PUT", "/v1/client/n1/allocs", strings.NewReader(`{"Allocs":[{"ID":"a1","ClientStatus":"failed"}]}`))
	if upd.status != 200 {
		t.Fatalf("alloc update: %d %s", upd.status, upd.body)
	}
	s := openStream(t, d.base+"/v1/event/stream?topic=Service&index=1")
	var got []string
	for len(got) < 2 {
		l := s.next(t)
		if l == "{}" {
			continue
		}
		var f struct {
			Index  uint64
			Events []struct {
				Topic, Type, Key, Namespace string
				Payload                     map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		for _, e := range f.Events {
			var sr events.ServiceRegistration
			if err := json.Unmarshal(e.Payload["Service"], &sr); err != nil || sr.ID != "w1" || sr.Port != 8080 {
				t.Fatalf("payload %s: %v", e.Payload["Service"], err)
			}
			got = append(got, fmt.Sprintf("%d %s %s %s %s", f.Index, e.Topic, e.Type, e.Key, e.Namespace))
		}
	}
	want := []string{fmt.Sprintf("%d Service ServiceRegistration w1 default", reg),
		fmt.Sprintf("%d Service ServiceDeregistration w1 default", upd.index(t))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestServicesACL: with ACLs on, reading services takes read-job in the
// namespace and deleting one submit-job, as Nomad's; a list of every
// namespace shows only those the token may read.
func TestServicesACL(t *testing.T) {
	t.Parallel()
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	if g.call(t, "PUT", "/v1/namespace/prod", mgmt, map[string]string{"Name": "prod"}) != 200 {
		t.Fatal("create prod")
	}
	if _, err := g.Pipeline().Run(context.Background(), "test.seed", commands.Request{}, seed{[]events.Payload{
		&events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1", Datacenter: "dc1", Status: events.NodeStatusReady}},
		&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{testAlloc("a1", "n1", "web", "e1"),
			func() events.Allocation { a := testAlloc("p1", "n1", "web", "e1"); a.Namespace = "prod"; return a }()}},
	}}); err != nil {
		t.Fatal(err)
	}
	c, err := serverapi.New([]string{g.base})
	if err != nil {
		t.Fatal(err)
	}
	prod := svcReg("pw1", "web", "p1", 8080)
	prod.Namespace = "prod"
	if _, err := c.RegisterServices(context.Background(), "n1", []events.ServiceRegistration{svcReg("w1", "web", "a1", 8080), prod}); err != nil {
		t.Fatal(err)
	}
	g.policy(t, mgmt, "reader", `namespace "default" { capabilities = ["read-job"] }`)
	reader := g.token(t, mgmt, "reader", "reader").SecretID
	var lists []struct{ Namespace string }
	if st := g.call(t, "GET", "/v1/services?namespace=*", reader, nil, &lists); st != 200 || len(lists) != 1 || lists[0].Namespace != "default" {
		t.Fatalf("reader's list of every namespace: %d %+v", st, lists)
	}
	if st := g.call(t, "GET", "/v1/services?namespace=*", mgmt, nil, &lists); st != 200 || len(lists) != 2 {
		t.Fatalf("management's list: %d %+v", st, lists)
	}
	var list []events.ServiceRegistration
	if st := g.call(t, "GET", "/v1/service/web", reader, nil, &list); st != 200 || len(list) != 1 {
		t.Fatalf("reader's get: %d %v", st, regIDs(list))
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/service/web?namespace=prod"}, {"GET", "/v1/service/web"}, {"DELETE", "/v1/service/web/w1"},
	} {
		tok := reader
		if tc.path == "/v1/service/web" {
			tok = ""
		}
		if st := g.call(t, tc.method, tc.path, tok, nil); st != 403 {
			t.Errorf("%s %s: %d, want 403", tc.method, tc.path, st)
		}
	}
	g.policy(t, mgmt, "submitter", `namespace "default" { capabilities = ["submit-job"] }`)
	if st := g.call(t, "DELETE", "/v1/service/web/w1", g.token(t, mgmt, "submitter", "submitter").SecretID, nil); st != 200 {
		t.Fatalf("submitter's delete: %d", st)
	}
}
