package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/replay"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testmetric"
)

// ttAgent starts a dev agent with scheduling on, its time travel tuned
// by opts.
func ttAgent(t *testing.T, opts ...func(*timetravel.Options)) (*agent.Agent, *api.Client) {
	t.Helper()
	cfg := testagent.DevConfig(t.TempDir())
	testagent.QuietNodes(&cfg)
	for _, o := range opts {
		o(&cfg.TimeTravel)
	}
	return testagent.StartDev(t, cfg)
}

func get(t *testing.T, a *agent.Agent, path string) testagent.Answer {
	t.Helper()
	return call(t, a, http.MethodGet, path, "")
}

func call(t *testing.T, a *agent.Agent, method, path, body string) testagent.Answer {
	t.Helper()
	return testagent.Call(t, a.HTTPAddr(), method, path, body)
}

func putOK(t *testing.T, a *agent.Agent, path, body string) {
	t.Helper()
	testagent.PutOK(t, a.HTTPAddr(), path, body)
}

func readyNode(t *testing.T, a *agent.Agent, id string) {
	t.Helper()
	testagent.ReadyNode(t, a.HTTPAddr(), id, 2000, 2048)
}

func ttJob(kind, id string, count int) *api.Job { return testagent.SleepJob(kind, id, count, 100) }

// recorded is a read a client made live: the path, the applied index
// before and after it (the state it answered from is at an index in
// between, nearly always one index) and the answer, with the index it
// carried (X-Nomad-Index: the last entry that changed a table the endpoint
// declares; 0 for an error).
type recorded struct {
	path     string
	from, to uint64
	index    uint64
	ans      testagent.Answer
}

// recorder reads a set of endpoints after each write of the workload.
type recorder struct {
	t     *testing.T
	a     *agent.Agent
	reads []recorded
}

func (r *recorder) read(path string) testagent.Answer {
	r.t.Helper()
	from := r.a.FSM().Applied()
	ans := get(r.t, r.a, path)
	rec := recorded{path: path, from: from, to: r.storedApplied(), ans: ans}
	if ans.Status == http.StatusOK {
		idx, err := strconv.ParseUint(ans.Header.Get("X-Nomad-Index"), 10, 64)
		if err != nil {
			r.t.Fatalf("GET %s: X-Nomad-Index %q", path, ans.Header.Get("X-Nomad-Index"))
		}
		rec.index = idx
	}
	r.reads = append(r.reads, rec)
	return ans
}

// storedApplied returns the applied index the state store holds now: the
// state a read answered from is at or below it. The FSM's Applied counter
// moves just after its batch commits, so a read can see an entry before
// the counter says it was applied.
func (r *recorder) storedApplied() uint64 {
	r.t.Helper()
	snap := r.a.FSM().Store().Snapshot()
	defer snap.Close()
	i, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		r.t.Fatal(err)
	}
	return i
}

// ids reads a list endpoint and returns up to n of its items' IDs.
func (r *recorder) ids(path string, n int) []string {
	r.t.Helper()
	ans := r.read(path)
	var items []struct{ ID string }
	_ = json.Unmarshal([]byte(ans.Body), &items)
	var out []string
	for _, it := range items {
		if len(out) == n {
			break
		}
		out = append(out, it.ID)
	}
	return out
}

// readAll reads every read endpoint with the workload's entities.
func (r *recorder) readAll() {
	r.t.Helper()
	r.read("/v1/namespaces")
	r.read("/v1/namespace/default")
	r.read("/v1/namespace/team")
	for _, id := range r.ids("/v1/nodes", 2) {
		r.read("/v1/node/" + id)
		r.read("/v1/node/" + id + "/allocations")
		r.read("/v1/client/" + id + "/allocations")
	}
	r.read("/v1/jobs")
	r.read("/v1/jobs?namespace=*")
	r.read("/v1/jobs?per_page=2")
	for _, job := range []string{"web", "report", "agent"} {
		for _, p := range []string{"", "/summary", "/versions", "/allocations", "/evaluations", "/deployments", "/deployment"} {
			r.read("/v1/job/" + job + p)
		}
	}
	for _, id := range r.ids("/v1/allocations", 3) {
		r.read("/v1/allocation/" + id)
	}
	r.read("/v1/allocations?per_page=3&reverse=true")
	for _, id := range r.ids("/v1/evaluations", 3) {
		r.read("/v1/evaluation/" + id)
		r.read("/v1/evaluation/" + id + "/allocations")
	}
	for _, id := range r.ids("/v1/deployments", 2) {
		r.read("/v1/deployment/" + id)
	}
}

// runAllocs reports every allocation on node as running, as its client would.
func runAllocs(t *testing.T, a *agent.Agent, node string) {
	t.Helper()
	ans := get(t, a, "/v1/node/"+node+"/allocations")
	var allocs []struct {
		ID, ClientStatus, DesiredStatus string
	}
	if err := json.Unmarshal([]byte(ans.Body), &allocs); err != nil {
		t.Fatalf("node allocations: %v: %s", err, ans.Body)
	}
	var ups []events.AllocClientUpdate
	for _, al := range allocs {
		if al.ClientStatus == "pending" && al.DesiredStatus == "run" {
			ups = append(ups, events.AllocClientUpdate{ID: al.ID, ClientStatus: "running",
				DeploymentStatus: &events.AllocDeploymentStatus{Healthy: new(true)}})
		}
	}
	if len(ups) == 0 {
		return
	}
	b, _ := json.Marshal(map[string]any{"Allocs": ups})
	putOK(t, a, "/v1/client/"+node+"/allocs", string(b))
}

// leaderTime returns the leader time of the entry at index from the archive.
func leaderTime(t *testing.T, a *agent.Agent, index uint64) (time.Time, bool) {
	t.Helper()
	var at time.Time
	found := false
	err := archive.Scan(a.Store(), index, index, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		at, found = time.Unix(0, ev.Time).UTC(), true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return at, found
}

func withParam(path, name, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + name + "=" + url.QueryEscape(value)
}

// TestAtIndexReadsEqualLiveReads drives a real agent through a workload —
// nodes registering through the client API, service, batch and system
// jobs placed by the scheduler, clients reporting allocations running,
// a scale up and down, a stop, a namespace, a node drained — reading every
// read endpoint after each write, while the scheduler works. Then it asks
// each endpoint again at_index the index each live answer carried, and
// requires the same status and the same body, byte for byte: nothing is
// normalised, since every field of every answer is derived from the
// projections at that index (leader times included; no answer reads the
// server's clock). It also reads at_time the leader time of such an index.
//
// The versions store serves every read.
func TestAtIndexReadsEqualLiveReads(t *testing.T) {
	a, c := ttAgent(t)
	rec := &recorder{t: t, a: a}
	step := func(what string, write func()) {
		t.Helper()
		write()
		rec.readAll() // while the scheduler works
		replay.WaitSettled(t, a.Store(), a.FSM().Notifier(), 30*time.Second)
		rec.readAll()
		t.Logf("%s: applied %d, %d reads", what, a.FSM().Applied(), len(rec.reads))
	}
	register := func(j *api.Job) {
		t.Helper()
		if _, _, err := c.Jobs().Register(j, nil); err != nil {
			t.Fatalf("register %s: %v", *j.ID, err)
		}
	}
	nodes := []string{"n0", "n1", "n2"}
	step("nodes", func() {
		for _, n := range nodes {
			readyNode(t, a, n)
		}
	})
	step("web", func() { register(ttJob("service", "web", 3)) })
	step("running", func() {
		for _, n := range nodes {
			runAllocs(t, a, n)
		}
	})
	step("report and agent", func() {
		register(ttJob("batch", "report", 2))
		register(ttJob("system", "agent", 1))
	})
	step("scale up", func() { register(ttJob("service", "web", 5)) })
	step("running again", func() {
		for _, n := range nodes {
			runAllocs(t, a, n)
		}
	})
	step("namespace", func() { putOK(t, a, "/v1/namespace/team", `{"Name":"team","Description":"a team"}`) })
	step("scale down", func() { register(ttJob("service", "web", 2)) })
	step("drain", func() { putOK(t, a, "/v1/node/n2/drain", `{"DrainSpec":{"Deadline":0},"MarkEligible":false}`) })
	step("stop report", func() {
		if _, _, err := c.Jobs().Deregister("report", false, nil); err != nil {
			t.Fatal(err)
		}
	})
	step("join", func() { readyNode(t, a, "n3") })

	if len(rec.reads) < 500 {
		t.Fatalf("only %d reads recorded", len(rec.reads))
	}
	// Ask in index order, as an investigator stepping through would.
	slices.SortStableFunc(rec.reads, func(x, y recorded) int { return int(x.from) - int(y.from) })
	indexes := map[uint64]bool{}
	for _, r := range rec.reads {
		var ans testagent.Answer
		var at string
		for i := r.from; i <= r.to; i++ { // nearly always one index
			at = strconv.FormatUint(i, 10)
			if ans = get(t, a, withParam(r.path, "at_index", at)); ans.Status == r.ans.Status && ans.Body == r.ans.Body {
				indexes[i] = true
				break
			}
		}
		if ans.Status != r.ans.Status || ans.Body != r.ans.Body {
			t.Errorf("GET %s at_index=%d:\n got %d %s\nlive %d %s", r.path, r.to, ans.Status, ans.Body, r.ans.Status, r.ans.Body)
			continue
		}
		if ans.Status != http.StatusOK {
			continue
		}
		if ans.Header.Get("X-Nomad-Index") != at || ans.Header.Get("X-Ordo-At-Index") != at {
			t.Errorf("GET %s at_index=%s: X-Nomad-Index %q, X-Ordo-At-Index %q", r.path, at,
				ans.Header.Get("X-Nomad-Index"), ans.Header.Get("X-Ordo-At-Index"))
		}
		if next := r.ans.Header.Get("X-Nomad-NextToken"); next != ans.Header.Get("X-Nomad-NextToken") {
			t.Errorf("GET %s at_index=%s: next token %q, live %q", r.path, at, ans.Header.Get("X-Nomad-NextToken"), next)
		}
	}
	t.Logf("%d reads at %d distinct indexes compared; applied %d", len(rec.reads), len(indexes), a.FSM().Applied())
	if fromVersions := testmetric.Value(t, a.Registry(), "ordo_timetravel_versions_reads_total"); fromVersions == 0 {
		t.Errorf("%v reads from versions", fromVersions)
	}

	// A live answer's X-Nomad-Index is the last entry that changed a table
	// its endpoint declares, so reading at that index must give the same
	// answer too, unless the endpoint reads a table it does not declare.
	for _, r := range rec.reads {
		if r.index == 0 {
			continue
		}
		ans := get(t, a, withParam(r.path, "at_index", strconv.FormatUint(r.index, 10)))
		if ans.Body != r.ans.Body {
			t.Errorf("GET %s at its X-Nomad-Index %d differs from the live answer:\n got %s\nlive %s", r.path, r.index, ans.Body, r.ans.Body)
		}
	}

	// at_time: the leader time of a recorded index answers from the last
	// index at or before it, which equals reading at that index.
	checked := 0
	for i, r := range rec.reads {
		if i%17 != 0 || r.from != r.to || r.ans.Status != http.StatusOK {
			continue
		}
		lt, ok := leaderTime(t, a, r.to)
		if !ok {
			continue // no events at this index (a rejection or a retry)
		}
		ans := get(t, a, withParam(r.path, "at_time", lt.Format(time.RFC3339Nano)))
		got, err := strconv.ParseUint(ans.Header.Get("X-Ordo-At-Index"), 10, 64)
		if ans.Status != http.StatusOK || err != nil {
			t.Fatalf("GET %s at_time=%s: %d %s", r.path, lt.Format(time.RFC3339Nano), ans.Status, ans.Body)
		}
		if gt, _ := leaderTime(t, a, got); got < r.to || gt.After(lt) {
			t.Errorf("at_time %s (time of %d) resolved to %d at %s", lt.Format(time.RFC3339Nano), r.to, got, gt)
		}
		if byIndex := get(t, a, withParam(r.path, "at_index", strconv.FormatUint(got, 10))); byIndex.Body != ans.Body {
			t.Errorf("GET %s: at_time answer differs from at_index=%d", r.path, got)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no at_time read checked")
	}
}

// errorField returns the Field of an error answer.
func errorField(t *testing.T, ans testagent.Answer) string {
	t.Helper()
	var body struct{ Error, Field string }
	if err := json.Unmarshal([]byte(ans.Body), &body); err != nil {
		t.Fatalf("error body %q: %v", ans.Body, err)
	}
	return body.Field
}

func TestHistoricalRequestsRefused(t *testing.T) {
	a, _ := ttAgent(t)
	putOK(t, a, "/v1/namespace/one", `{"Name":"one"}`)
	applied := a.FSM().Applied()
	at := strconv.FormatUint(applied, 10)
	for _, tc := range []struct {
		method, path, body string
		field, text        string
	}{
		// Writes: nothing is appended.
		{"PUT", "/v1/namespace/two?at_index=" + at, `{"Name":"two"}`, "at_index", "writes are refused on a historical view"},
		{"DELETE", "/v1/namespace/one?at_index=" + at, "", "at_index", "writes are refused on a historical view"},
		{"POST", "/v1/namespace/two?at_time=2026-01-01T00:00:00Z", `{"Name":"two"}`, "at_time", "writes are refused on a historical view"},
		{"PUT", "/v1/client/register?at_index=1", `{"ID":"n9","Name":"n9","Datacenter":"dc1"}`, "at_index", "writes are refused"},
		// Blocking queries cannot ask for the past.
		{"GET", "/v1/namespaces?index=1&at_index=" + at, "", "index", "blocking"},
		{"GET", "/v1/namespaces?wait=1s&at_index=" + at, "", "wait", "blocking"},
		// Out of range or malformed.
		{"GET", "/v1/namespaces?at_index=" + strconv.FormatUint(applied+1000, 10), "", "at_index", "beyond the applied index"},
		{"GET", "/v1/namespaces?at_index=0", "", "at_index", "positive integer"},
		{"GET", "/v1/namespaces?at_index=x", "", "at_index", "positive integer"},
		{"GET", "/v1/namespaces?at_time=yesterday", "", "at_time", "RFC 3339"},
		{"GET", "/v1/namespaces?at_time=2000-01-01T00:00:00Z", "", "at_time", "before the first entry"},
		{"GET", "/v1/namespaces?at_index=1&at_time=2000-01-01T00:00:00Z", "", "at_time", "not both"},
		// Endpoints that do not read projections.
		{"GET", "/v1/agent/self?at_index=" + at, "", "at_index", "does not serve past states"},
		{"GET", "/v1/status/leader?at_index=" + at, "", "at_index", "does not serve past states"},
		{"GET", "/v1/operator/log?at_index=" + at, "", "at_index", "does not serve past states"},
		{"GET", "/v1/event/stream?at_index=" + at, "", "at_index", "does not serve past states"},
		{"GET", "/v1/operator/log/stream?at_index=" + at, "", "at_index", "does not serve past states"},
		{"GET", "/v1/operator/history?at_index=" + at, "", "at_index", "does not serve past states"},
	} {
		ans := call(t, a, tc.method, tc.path, tc.body)
		if ans.Status != http.StatusBadRequest || errorField(t, ans) != tc.field || !strings.Contains(ans.Body, tc.text) {
			t.Errorf("%s %s: %d %s; want 400 naming %s, saying %q", tc.method, tc.path, ans.Status, ans.Body, tc.field, tc.text)
		}
		if ans.Header.Get("X-Nomad-Index") != "" || ans.Header.Get("X-Ordo-At-Index") != "" {
			t.Errorf("%s %s: a refusal carries an index: %v", tc.method, tc.path, ans.Header)
		}
	}
	if got := a.FSM().Applied(); got != applied {
		t.Fatalf("applied index moved from %d to %d: a refused write was appended", applied, got)
	}
	if ans := get(t, a, "/v1/namespace/two"); ans.Status != http.StatusNotFound {
		t.Fatalf("namespace two: %d %s", ans.Status, ans.Body)
	}
	// The same reads without the past answer as ever.
	if ans := get(t, a, "/v1/namespaces?index=1&wait=10ms"); ans.Status != http.StatusOK || ans.Header.Get("X-Ordo-At-Index") != "" {
		t.Fatalf("live read: %d %v", ans.Status, ans.Header)
	}
	// And at_time a moment after the last write answers the current state.
	if ans := get(t, a, "/v1/namespaces?at_time="+time.Now().Add(time.Minute).UTC().Format(time.RFC3339)); ans.Status != http.StatusOK ||
		ans.Header.Get("X-Ordo-At-Index") != at || ans.Body != get(t, a, "/v1/namespaces").Body {
		t.Fatalf("at_time now: %d %v %s", ans.Status, ans.Header, ans.Body)
	}
}

// TestHistoryStatus: GET /v1/operator/history says the versions store
// serves from the log's first index to the applied index, with the
// running projection versions, and no backfill under way.
func TestHistoryStatus(t *testing.T) {
	a, _ := ttAgent(t)
	for i := range 12 {
		putOK(t, a, fmt.Sprintf("/v1/namespace/ns-%d", i), fmt.Sprintf(`{"Name":"ns-%d"}`, i))
	}
	applied := a.FSM().Applied()
	var st timetravel.Status
	// The checks below say what is missing when the wait gives up.
	waittest.Poll(10*time.Second, func() bool {
		ans := get(t, a, "/v1/operator/history")
		if ans.Status != http.StatusOK {
			t.Fatalf("GET /v1/operator/history: %d %s", ans.Status, ans.Body)
		}
		if err := json.Unmarshal([]byte(ans.Body), &st); err != nil {
			t.Fatal(err)
		}
		return st.Versions != nil && len(st.Versions.Spans) > 0 && st.Versions.Spans[len(st.Versions.Spans)-1].To >= applied
	})
	if st.Applied < applied || st.Versions == nil || len(st.Versions.Spans) == 0 {
		t.Fatalf("status %+v", st)
	}
	last := st.Versions.Spans[len(st.Versions.Spans)-1]
	if !last.Current || last.To < applied || last.From > 1 {
		t.Errorf("newest span %+v, want a current one from the start through %d", last, applied)
	}
	if st.Versions.Oldest != 1 || st.Versions.Backfill != nil {
		t.Errorf("oldest index %d, backfill %+v; want 1 and none", st.Versions.Oldest, st.Versions.Backfill)
	}
}
