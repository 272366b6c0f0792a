package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/test/testlog"
)

// startVarAgent is startAgent with the agent's logs (debug level) in logs
// when it is not nil, waiting until the keyring has an active key.
func startVarAgent(t *testing.T, logs io.Writer) *devAgent {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Scheduler.Disabled = true
	cfg.Logger = discard
	cfg.RaftLogOutput = io.Discard
	if logs != nil {
		// Write-ahead logs on disk, so the grep of the data dir sees
		// every write in whatever form it has.
		cfg.NoSync = false
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		cfg.RaftLogOutput = logs
	}
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: testTimeout}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		if err := a.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	d := &devAgent{Agent: a, base: "http://" + a.HTTPAddr(), client: client}
	d.waitFor(t, "default namespace and an active root key", func(v projections.View) bool {
		_, err := namespaces.Get(v, namespaces.Default)
		_, kerr := keyring.Active(v)
		return err == nil && kerr == nil && a.Node().IsLeader()
	})
	return d
}

type varJSON struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Items       map[string]string
}

func (d *devAgent) putVar(t *testing.T, path, query string, items map[string]string) response {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"Items": items})
	return d.do(t, "PUT", "/v1/var/"+path+query, bytes.NewReader(b))
}

// TestVariableLifecycleOverHTTP: put, get (decrypted), list (metadata
// only), cas conflicts answered 409 with the current variable, delete,
// and 404 after it.
func TestVariableLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	r := d.putVar(t, "app/db", "?cas=0", map[string]string{"user": "app", "password": "s3cret"})
	if r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	var put varJSON
	r.decode(t, &put)
	if put.Namespace != "default" || put.Path != "app/db" || put.Items["password"] != "s3cret" ||
		put.ModifyIndex == 0 || put.ModifyIndex != r.index(t) || put.CreateTime == 0 {
		t.Fatalf("put answer %+v (index %d)", put, r.index(t))
	}
	var got varJSON
	d.do(t, "GET", "/v1/var/app/db", nil).decode(t, &got)
	if got.Items["user"] != "app" || got.Items["password"] != "s3cret" || got.ModifyIndex != put.ModifyIndex {
		t.Fatalf("get %+v", got)
	}
	r = d.putVar(t, "app/db", "?cas=0", map[string]string{"x": "y"})
	var conflict varJSON
	r.decode(t, &conflict)
	if r.status != 409 || conflict.ModifyIndex != put.ModifyIndex || conflict.Items["password"] != "s3cret" {
		t.Fatalf("cas 0 on an existing variable: %d %s", r.status, r.body)
	}
	if r := d.putVar(t, "app/db", fmt.Sprintf("?cas=%d", put.ModifyIndex), map[string]string{"password": "rotated"}); r.status != 200 {
		t.Fatalf("cas update: %d %s", r.status, r.body)
	}
	if r := d.putVar(t, "app/web", "", map[string]string{"k": "v"}); r.status != 200 {
		t.Fatalf("put without cas: %d %s", r.status, r.body)
	}
	r = d.do(t, "GET", "/v1/vars?prefix=app/", nil)
	if r.status != 200 || bytes.Contains(r.body, []byte("rotated")) || bytes.Contains(r.body, []byte("Items")) {
		t.Fatalf("list shows items: %s", r.body)
	}
	var list []varJSON
	r.decode(t, &list)
	if len(list) != 2 || list[0].Path != "app/db" || list[1].Path != "app/web" {
		t.Fatalf("list %s", r.body)
	}
	if r := d.do(t, "DELETE", fmt.Sprintf("/v1/var/app/db?cas=%d", put.ModifyIndex), nil); r.status != 409 {
		t.Fatalf("delete with a stale cas: %d %s", r.status, r.body)
	}
	if r := d.do(t, "DELETE", "/v1/var/app/db", nil); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := d.do(t, "GET", "/v1/var/app/db", nil); r.status != 404 {
		t.Fatalf("get after delete: %d %s", r.status, r.body)
	}
}

// TestVariableBlockingQuery: a GET with index waits for the variable to
// change.
func TestVariableBlockingQuery(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	r := d.putVar(t, "watched", "", map[string]string{"v": "1"})
	idx := r.index(t)
	ch := d.blockingGet(fmt.Sprintf("/v1/var/watched?index=%d&wait=10s", idx))
	select {
	case res := <-ch:
		t.Fatalf("blocking query answered before a change: %+v", res)
	case <-time.After(100 * time.Millisecond):
	}
	d.putVar(t, "watched", "", map[string]string{"v": "2"})
	res := receive(t, ch)
	if !strings.Contains(string(res.body), `"v":"2"`) {
		t.Fatalf("woke with %s", res.body)
	}
}

// TestVariableBadInput: invalid paths, items, cas and namespaces answer
// 400 naming the field, and nothing reaches the log.
func TestVariableBadInput(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	d.putNamespace(t, "team-a", "")
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"bad char", "PUT", "/v1/var/a.b", `{"Items":{"k":"v"}}`, "path"},
		{"reserved nomad", "PUT", "/v1/var/nomad/secrets", `{"Items":{"k":"v"}}`, "path"},
		{"path too long", "PUT", "/v1/var/" + strings.Repeat("p", 129), `{"Items":{"k":"v"}}`, "path"},
		{"no items", "PUT", "/v1/var/a", `{"Items":{}}`, "Items"},
		{"empty item key", "PUT", "/v1/var/a", `{"Items":{"":"v"}}`, "Items"},
		{"items not strings", "PUT", "/v1/var/a", `{"Items":{"k":5}}`, "Items"},
		{"malformed", "PUT", "/v1/var/a", `{"Items":`, "body"},
		{"bad cas", "PUT", "/v1/var/a?cas=x", `{"Items":{"k":"v"}}`, "cas"},
		{"body path differs", "PUT", "/v1/var/a", `{"Path":"b","Items":{"k":"v"}}`, "Path"},
		{"body namespace differs", "PUT", "/v1/var/a?namespace=team-a", `{"Namespace":"default","Items":{"k":"v"}}`, "Namespace"},
		{"missing namespace", "PUT", "/v1/var/a?namespace=nope", `{"Items":{"k":"v"}}`, "namespace"},
		{"bad namespace", "PUT", "/v1/var/a?namespace=bad_ns!", `{"Items":{"k":"v"}}`, "namespace"},
		{"locks", "PUT", "/v1/var/a?lock-acquire", `{"Items":{"k":"v"}}`, "lock-acquire"},
		{"get bad path", "GET", "/v1/var/a@b", ``, "path"},
		{"delete bad cas", "DELETE", "/v1/var/a?cas=-1", ``, "cas"},
		{"list bad token", "GET", "/v1/vars?next_token=nodot", ``, "next_token"},
		{"negative namespace quota", "PUT", "/v1/namespace/team-a", `{"VariablesQuota":-1}`, "VariablesQuota"},
		// Issue 31.
		{"doubled slash", "PUT", "/v1/var/a//b", `{"Items":{"k":"v"}}`, "path"},
		{"leading slash", "PUT", "/v1/var//a", `{"Items":{"k":"v"}}`, "path"},
		{"escaped doubled slash", "PUT", "/v1/var/a%2F%2Fb", `{"Items":{"k":"v"}}`, "path"},
		{"get doubled slash", "GET", "/v1/var/a//b", ``, "path"},
		{"delete leading slash", "DELETE", "/v1/var//a", ``, "path"},
		{"null item key", "PUT", "/v1/var/a", `{"Items":{"\u0000":"v"}}`, "Items"},
		{"control item key", "PUT", "/v1/var/a", `{"Items":{"a\nb":"v"}}`, "Items"},
		{"item key too long", "PUT", "/v1/var/a", `{"Items":{"` + strings.Repeat("k", 257) + `":"v"}}`, "Items"},
		{"namespace null byte", "GET", "/v1/vars?namespace=a%00b", ``, "namespace"},
		{"oversized Idempotency-Key", "PUT", "/v1/var/a", `{"Items":{"k":"v"}}`, "Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := d.archiveLen(t)
			var header []string
			if tc.field == "Idempotency-Key" {
				header = []string{"Idempotency-Key", strings.Repeat("k", 900<<10)}
			}
			r := d.do(t, tc.method, tc.path, strings.NewReader(tc.body), header...)
			if r.status != 400 {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			if e := r.apiError(t); e.Field != tc.field || e.Reason == "" {
				t.Fatalf("error %s, want Field %q", r.body, tc.field)
			}
			if d.archiveLen(t) != before {
				t.Fatal("bad input reached the log")
			}
		})
	}
}

// TestVariableQuotaOverHTTP (N13): a namespace's VariablesQuota refuses a
// put that would exceed it with a 409 saying so; usage frees on delete.
func TestVariableQuotaOverHTTP(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	if r := d.do(t, "PUT", "/v1/namespace/small", strings.NewReader(`{"VariablesQuota": 300}`)); r.status != 200 {
		t.Fatalf("namespace: %d %s", r.status, r.body)
	}
	var ns struct{ VariablesQuota int64 }
	d.do(t, "GET", "/v1/namespace/small", nil).decode(t, &ns)
	if ns.VariablesQuota != 300 {
		t.Fatalf("namespace quota %d", ns.VariablesQuota)
	}
	big := map[string]string{"k": strings.Repeat("x", 150)}
	if r := d.putVar(t, "a", "?namespace=small", big); r.status != 200 {
		t.Fatalf("first put: %d %s", r.status, r.body)
	}
	before := d.archiveLen(t)
	r := d.putVar(t, "b", "?namespace=small", big)
	if r.status != 409 || !strings.Contains(r.apiError(t).Error, `namespace "small" variables quota exceeded`) {
		t.Fatalf("over quota: %d %s", r.status, r.body)
	}
	if d.archiveLen(t) != before {
		t.Fatal("a refused put reached the log")
	}
	d.do(t, "DELETE", "/v1/var/a?namespace=small", nil)
	if r := d.putVar(t, "b", "?namespace=small", big); r.status != 200 {
		t.Fatalf("put after freeing: %d %s", r.status, r.body)
	}
}

// TestNamespaceDeleteGuardOverHTTP (N9): deleting a namespace that holds
// a variable answers 409 naming it.
func TestNamespaceDeleteGuardOverHTTP(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	d.putNamespace(t, "team-a", "")
	d.putVar(t, "db", "?namespace=team-a", map[string]string{"k": "v"})
	r := d.do(t, "DELETE", "/v1/namespace/team-a", nil)
	if r.status != 409 || !strings.Contains(r.apiError(t).Error, `namespace "team-a" still holds 1 variable`) {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	d.do(t, "DELETE", "/v1/var/db?namespace=team-a", nil)
	if r := d.do(t, "DELETE", "/v1/namespace/team-a", nil); r.status != 200 {
		t.Fatalf("delete of the emptied namespace: %d %s", r.status, r.body)
	}
}

// TestVariableListPaging: per_page and next_token walk every namespace's
// variables in order.
func TestVariableListPaging(t *testing.T) {
	t.Parallel()
	d := startVarAgent(t, nil)
	d.putNamespace(t, "b", "")
	var want []string
	for i := range 5 {
		p := fmt.Sprintf("p%d", i)
		d.putVar(t, p, "", map[string]string{"k": "v"})
		d.putVar(t, p, "?namespace=b", map[string]string{"k": "v"})
		want = append(want, "b/"+p)
	}
	var defaults []string
	for i := range 5 {
		defaults = append(defaults, fmt.Sprintf("default/p%d", i))
	}
	want = append(want, defaults...)
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		r := d.do(t, "GET", "/v1/vars?namespace=*&per_page=3&next_token="+token, nil)
		var list []varJSON
		r.decode(t, &list)
		for _, v := range list {
			got = append(got, v.Namespace+"/"+v.Path)
		}
		if token = r.header.Get("X-Nomad-NextToken"); token == "" {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paged %v, want %v", got, want)
	}
}

// TestVariableSecretsNeverInClear (invariant 7): a variable's item values
// appear nowhere in clear: not in the bytes of the data directory (raft
// log, archive, projections), not in the event stream nor the operator
// log, not in the agent's logs at debug level; the path does (the check
// can see clear text).
func TestVariableSecretsNeverInClear(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	d := startVarAgent(t, logs)
	const secret = "Zq7-secret-value-9f3b2c41e8d04a6b"
	const marker = "marker-path-7c2e"
	for i := range 3 {
		r := d.putVar(t, fmt.Sprintf("%s/%d", marker, i), "", map[string]string{"password": secret, "api_key": secret + "-key"})
		if r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.body)
		}
	}
	last := d.FSM().Applied()
	// A read decrypts, and the value must not be logged then either.
	var got varJSON
	d.do(t, "GET", "/v1/var/"+marker+"/0", nil).decode(t, &got)
	if got.Items["password"] != secret {
		t.Fatalf("read back %+v", got)
	}
	// The log's stream from the start, up to the last write.
	s := openStream(t, d.base+"/v1/operator/log/stream?index=1")
	var streamed bytes.Buffer
	for {
		l := s.next(t)
		streamed.WriteString(l + "\n")
		var f frame
		if l != "{}" && json.Unmarshal([]byte(l), &f) == nil && f.Index >= last {
			break
		}
	}
	if !bytes.Contains(streamed.Bytes(), []byte(marker)) {
		t.Fatal("the stream has no variable events: the check sees nothing")
	}
	if bytes.Contains(streamed.Bytes(), []byte(secret)) {
		t.Fatal("a variable's value is in clear in the event stream")
	}
	if !bytes.Contains(streamed.Bytes(), []byte(`"Data":"\u003credacted\u003e"`)) {
		t.Fatalf("the stream's variable events do not redact Data")
	}
	if r := d.do(t, "GET", "/v1/operator/log?limit=1000", nil); bytes.Contains(r.body, []byte(secret)) {
		t.Fatal("a variable's value is in clear in the operator log")
	}
	// Every byte on disk; Pebble's WAL holds recent writes uncompressed.
	var found, sawMarker []string
	err := filepath.WalkDir(d.Config().DataDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // a file removed while walking (compaction)
		}
		if bytes.Contains(b, []byte(secret)) {
			found = append(found, p)
		}
		if bytes.Contains(b, []byte(marker)) {
			sawMarker = append(sawMarker, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sawMarker) == 0 {
		t.Fatal("no file holds the variable's path: the grep sees nothing")
	}
	if len(found) > 0 {
		t.Fatalf("a variable's value is in clear on disk: %v", found)
	}
	if !bytes.Contains(logs.Bytes(), []byte(marker)) {
		t.Fatal("the debug log has no variable lines: the check sees nothing")
	}
	if bytes.Contains(logs.Bytes(), []byte(secret)) {
		t.Fatal("a variable's value is in the agent's logs")
	}
}
