package httpapi_test

import (
	"bytes"
	"context"
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

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testlog"
)

type aclAgent struct {
	*agent.Agent
	base string
	dir  string
	logs *testlog.Buffer
	hc   *http.Client
	down bool // shut down by the test itself
}

func startACLAgent(t *testing.T) *aclAgent {
	t.Helper()
	cfg := agent.DevConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Scheduler.Disabled = true
	cfg.ACL.Enabled = true
	cfg.ClusterSecret = matrixSecret
	logs := &testlog.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.RaftLogOutput = logs
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	g := &aclAgent{Agent: a, base: "http://" + a.HTTPAddr(), dir: cfg.DataDir, logs: logs, hc: hc}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		if !g.down {
			a.Shutdown()
		}
	})
	waittest.For(t, 10*time.Second, "a leader", func() bool {
		return a.Node().IsLeader() && g.call(t, "GET", "/v1/status/leader", "", nil) == 200
	})
	return g
}

// call sends a request with token and decodes a 2xx answer into out.
func (g *aclAgent) call(t *testing.T, method, path, token string, body any, out ...any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if token == matrixSecret {
		req.Header.Set(httpapi.ClusterSecretHeader, token) // the cluster secret, not a token
	} else if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := g.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 == 2 && len(out) > 0 {
		if err := json.Unmarshal(b, out[0]); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	if resp.StatusCode/100 != 2 && len(out) > 0 {
		t.Fatalf("%s %s = %d: %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// matrixSecret is the ACL agent's cluster secret.
const matrixSecret = "matrix-cluster-secret-0123456789"

type tokenOut struct{ AccessorID, SecretID string }

func (g *aclAgent) policy(t *testing.T, mgmt, name, rules string) {
	t.Helper()
	if st := g.call(t, "PUT", "/v1/acl/policy/"+name, mgmt, map[string]string{"Name": name, "Rules": rules}); st != 200 {
		t.Fatalf("policy %s: %d", name, st)
	}
}

func (g *aclAgent) token(t *testing.T, mgmt, name string, policies ...string) tokenOut {
	t.Helper()
	var out tokenOut
	g.call(t, "PUT", "/v1/acl/token", mgmt, map[string]any{"Name": name, "Type": "client", "Policies": policies}, &out)
	return out
}

// fill turns a pattern into a concrete request path.
func fill(path string) string {
	r := strings.NewReplacer("{name}", "default", "{id}", "no-such-id", "{path...}", "web/x", "{kind}", "job",
		"{id...}", "no-such-job", "{accessor}", "no-such-accessor", "{type}", "JobRegistered", "{eval_id}", "no-such-eval")
	return r.Replace(path)
}

var jobBody = map[string]any{"Job": map[string]any{"ID": "matrix", "Name": "matrix", "Type": "batch", "Datacenters": []string{"dc1"},
	"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{"Name": "t", "Driver": "mock", "Config": map[string]any{}}}}}}}

// TestACLMatrix runs every route of the access table against one agent
// with ACLs on, as four callers: no token, a token for another namespace,
// a token with an insufficient capability and a token with exactly the
// right one. Denied callers get 403; allowed ones anything else.
func TestACLMatrix(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	if g.call(t, "PUT", "/v1/namespace/prod", mgmt, map[string]string{"Name": "prod"}) != 200 {
		t.Fatal("create prod")
	}
	g.policy(t, mgmt, "other-ns", "namespace \"prod\" {\n policy = \"write\"\n variables {\n path \"*\" { capabilities = [\"read\", \"write\", \"list\", \"destroy\"] }\n }\n}")
	other := g.token(t, mgmt, "other", "other-ns")
	g.policy(t, mgmt, "everything", "namespace \"*\" {\n policy = \"write\"\n variables {\n path \"*\" { capabilities = [\"read\", \"write\", \"list\", \"destroy\"] }\n }\n}\nnode { policy = \"write\" }\nagent { policy = \"write\" }\noperator { policy = \"write\" }")
	everything := g.token(t, mgmt, "everything", "everything")
	tokens := map[string]string{}
	tokenFor := func(rules string) string {
		if s, ok := tokens[rules]; ok {
			return s
		}
		name := fmt.Sprintf("p%d", len(tokens))
		g.policy(t, mgmt, name, rules)
		tokens[rules] = g.token(t, mgmt, name, name).SecretID
		return tokens[rules]
	}
	allNSCaps := []string{policy.CapListJobs, policy.CapParseJob, policy.CapReadJob, policy.CapSubmitJob, policy.CapDispatchJob,
		policy.CapReadLogs, policy.CapReadFS, policy.CapAllocExec, policy.CapAllocLifecycle, policy.CapScaleJob}
	nsCaps := func(caps []string, except string) string {
		var keep []string
		for _, c := range caps {
			if c != except {
				keep = append(keep, `"`+c+`"`)
			}
		}
		return "namespace \"default\" {\n capabilities = [" + strings.Join(keep, ", ") + "]\n}"
	}
	vars := func(caps ...string) string {
		return "namespace \"default\" {\n variables {\n path \"web/*\" { capabilities = [\"" + strings.Join(caps, "\", \"") + "\"] }\n }\n}"
	}
	for _, pattern := range httpapi.RoutePatterns() {
		method, path, _ := strings.Cut(pattern, " ")
		kind, arg := httpapi.Requirement(pattern)
		// insufficient and right are the tokens one capability short of the
		// route's requirement and with exactly it.
		var insufficient, right string
		switch kind {
		case "public", "anyone", "token":
			insufficient, right = other.SecretID, other.SecretID
		case "management", "clusterOrManagement":
			insufficient, right = everything.SecretID, mgmt
		case "cluster": // no token passes; the secret does (below)
			insufficient, right = mgmt, matrixSecret
		case "ns", "inHandler":
			insufficient, right = tokenFor(nsCaps(allNSCaps, arg)), tokenFor(nsCaps([]string{arg}, ""))
		case "nsPath":
			insufficient, right = tokenFor(`namespace "default" { policy = "deny" }`), tokenFor(nsCaps([]string{policy.CapListJobs}, ""))
		case "node", "agent", "operator":
			if arg == "write" {
				insufficient, right = tokenFor(kind+` { policy = "read" }`), tokenFor(kind+` { policy = "write" }`)
			} else {
				insufficient, right = tokenFor(kind+` { policy = "deny" }`), tokenFor(kind+` { policy = "read" }`)
			}
		case "vars":
			switch arg {
			case policy.VarRead:
				insufficient, right = tokenFor(vars("list")), tokenFor(vars("read"))
			case policy.VarWrite:
				insufficient, right = tokenFor(vars("read")), tokenFor(vars("write"))
			case policy.VarDestroy:
				insufficient, right = tokenFor(vars("read", "write")), tokenFor(vars("destroy"))
			default: // a list: some access to the namespace
				insufficient, right = tokenFor(`namespace "default" { policy = "deny" }`), tokenFor(vars("list"))
			}
		default:
			t.Fatalf("%s: unknown requirement %q", pattern, kind)
		}
		if kind == "clusterOrManagement" && g.call(t, method, fill(path)+"?namespace=default", matrixSecret, nil) == http.StatusForbidden {
			t.Errorf("%s with the cluster secret: 403, want allowed", pattern)
		}
		allow := map[string]bool{"none": kind == "public" || kind == "anyone",
			"other namespace": kind == "public" || kind == "anyone" || kind == "token",
			"insufficient":    kind == "public" || kind == "anyone" || kind == "token",
			"right":           true}
		callers := map[string]string{"none": "", "other namespace": other.SecretID, "insufficient": insufficient, "right": right}
		for _, who := range []string{"none", "other namespace", "insufficient", "right"} {
			if (pattern == "GET /v1/event/stream" || pattern == "GET /v1/operator/log/stream") && allow[who] {
				continue // a stream answers as it goes; checked in TestACLSecretsNeverInClear
			}
			if pattern == "GET /v1/agent/monitor" && allow[who] {
				continue // a stream too; checked in TestMonitorNeedsAgentRead
			}
			if pattern == "GET /v1/operator/keyring/key/{id}" {
				continue // the keyring authenticates the servers' key fetch itself
			}
			var body any
			if method == "PUT" || method == "POST" {
				body = map[string]any{}
				if kind == "inHandler" {
					body = jobBody
				}
			}
			st := g.call(t, method, fill(path)+"?namespace=default", callers[who], body)
			if got := st != http.StatusForbidden; got != allow[who] {
				t.Errorf("%s as %s: status %d, want allowed=%v", pattern, who, st, allow[who])
			}
		}
	}
}

// TestACLWithNomadClient: the nomad/api client works with a token:
// bootstrap, policies, tokens, self, and a client token's reads.
func TestACLWithNomadClient(t *testing.T) {
	g := startACLAgent(t)
	anon, err := api.NewClient(&api.Config{Address: g.base})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := anon.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := anon.Jobs().List(nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("anonymous job list: %v, want 403", err)
	}
	mc, _ := api.NewClient(&api.Config{Address: g.base, SecretID: boot.SecretID})
	if _, err := mc.ACLPolicies().Upsert(&api.ACLPolicy{Name: "readonly", Rules: `namespace "default" { policy = "read" }`}, nil); err != nil {
		t.Fatal(err)
	}
	role, _, err := mc.ACLRoles().Create(&api.ACLRole{Name: "readers", Policies: []*api.ACLRolePolicyLink{{Name: "readonly"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := mc.ACLTokens().Create(&api.ACLToken{Name: "alice", Type: "client",
		Roles: []*api.ACLTokenRoleLink{{Name: "readers"}, {ID: role.ID}}, ExpirationTTL: 8 * time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok.SecretID == "" || len(tok.Roles) != 1 || tok.Roles[0].ID != role.ID || tok.ExpirationTime == nil {
		t.Fatalf("created token = %+v", tok)
	}
	cc, _ := api.NewClient(&api.Config{Address: g.base, SecretID: tok.SecretID})
	if _, _, err := cc.Jobs().List(nil); err != nil {
		t.Fatalf("client token job list: %v", err)
	}
	self, _, err := cc.ACLTokens().Self(nil)
	if err != nil || self.AccessorID != tok.AccessorID || self.SecretID != "" {
		t.Fatalf("self = %+v, %v (the secret is never read back)", self, err)
	}
	if _, err := cc.Namespaces().Register(&api.Namespace{Name: "x"}, nil); err == nil {
		t.Fatal("a read-only token created a namespace")
	}
	list, _, err := mc.ACLTokens().List(nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("token list = %d, %v", len(list), err)
	}
}

// TestACLBootstrapResetAndAudit: bootstrap once, again after the reset
// file names the reset index; commands record the caller's AccessorID.
func TestACLBootstrapResetAndAudit(t *testing.T) {
	g := startACLAgent(t)
	var first tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &first)
	var refusal struct{ Error string }
	req, _ := http.NewRequest("PUT", g.base+"/v1/acl/bootstrap", nil)
	resp, err := g.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	var reset uint64
	if resp.StatusCode != 400 || !strings.Contains(refusal.Error, "reset index: ") {
		t.Fatalf("second bootstrap = %d %q", resp.StatusCode, refusal.Error)
	}
	fmt.Sscanf(refusal.Error[strings.Index(refusal.Error, "reset index: ")+len("reset index: "):], "%d", &reset)
	if err := os.WriteFile(filepath.Join(g.dir, agent.ACLResetFile), fmt.Appendf(nil, "%d\n", reset), 0o600); err != nil {
		t.Fatal(err)
	}
	var second tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &second)
	if second.SecretID == "" || second.SecretID == first.SecretID {
		t.Fatal("the reset bootstrap returned no new token")
	}
	if st := g.call(t, "PUT", "/v1/acl/bootstrap", "", nil); st != 400 {
		t.Fatalf("a reset index used twice: %d", st)
	}
	// Audit: the namespace write records the caller's AccessorID.
	g.call(t, "PUT", "/v1/namespace/audited", second.SecretID, map[string]string{"Name": "audited"})
	var hist []struct{ Type, Actor string }
	g.call(t, "GET", "/v1/history/namespace/audited", second.SecretID, nil, &hist)
	if len(hist) == 0 || hist[0].Actor != second.AccessorID {
		t.Fatalf("history = %+v, want the actor %s", hist, second.AccessorID)
	}
}

// TestACLSecretsNeverInClear: token secrets appear in no file of the data
// directory (the Pebble archive and projections, the raft log), in the
// event stream or in the logs; the stored hash is redacted in the stream.
func TestACLSecretsNeverInClear(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	g.policy(t, boot.SecretID, "r", `namespace "default" { policy = "read" }`)
	secrets := []string{boot.SecretID}
	for i := range 3 {
		secrets = append(secrets, g.token(t, boot.SecretID, fmt.Sprint("t", i), "r").SecretID)
	}
	// The event stream, read for a moment from the start.
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.base+"/v1/operator/log/stream?index=1", nil)
	req.Header.Set("X-Nomad-Token", boot.SecretID)
	resp, err := g.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(stream, []byte("ACLTokenUpserted")) || !bytes.Contains(stream, []byte(`"SecretHash":"\u003credacted\u003e"`)) {
		t.Fatalf("stream lacks the redacted token events: %s", stream)
	}
	g.down = true
	if err := g.Shutdown(); err != nil { // flush everything to disk
		t.Fatal(err)
	}
	var files [][]byte
	filepath.WalkDir(g.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil {
				files = append(files, b)
			}
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no data files read")
	}
	logs := g.logs.String()
	for _, s := range secrets {
		for _, f := range files {
			if bytes.Contains(f, []byte(s)) {
				t.Fatalf("secret %.8s… found in a data file", s)
			}
		}
		if bytes.Contains(stream, []byte(s)) || strings.Contains(logs, s) {
			t.Fatalf("secret %.8s… in the stream or the logs", s)
		}
		if bytes.Contains(stream, []byte(acl.HashSecret(s))) {
			t.Fatal("a secret's hash reached the stream")
		}
	}
}
