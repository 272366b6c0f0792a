package httpapi

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/keyring"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/keystore"
)

var rewrite = flag.Bool("rewrite", false, "rewrite docs/acl.md's access table from routeAccess")

// registeredPatterns returns the routes a server with every optional
// part (the keyring, variables) registers.
func registeredPatterns(t *testing.T) []string {
	t.Helper()
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ks, err := keystore.Open(filepath.Join(t.TempDir(), "keystore"))
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.New(keyring.Config{Keystore: ks, Store: store, Pipeline: p})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{FSM: fsm, Pipeline: p, ReadOnly: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Keyring: &KeyringOptions{Keyring: kr}, Encrypter: kr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.patterns
}

// TestEveryRouteHasAccess fails when a registered route has no entry in
// routeAccess (it would answer management tokens only), or when an entry
// names no route.
func TestEveryRouteHasAccess(t *testing.T) {
	registered := map[string]bool{}
	for _, pat := range registeredPatterns(t) {
		registered[pat] = true
		if _, ok := routeAccess[pat]; !ok {
			t.Errorf("route %q has no entry in routeAccess (authz.go)", pat)
		}
	}
	for pat := range routeAccess {
		if !registered[pat] {
			t.Errorf("routeAccess lists %q, which no route registers", pat)
		}
	}
	for _, pat := range []string{"GET /v1/operator/keyring/key/{id}", "GET /.well-known/jwks.json"} {
		if !routeAccess[pat].public {
			t.Errorf("%q authenticates itself, outside the ACL check: its entry must say public", pat)
		}
	}
}

const (
	tableBegin = "<!-- access table: generated from routeAccess by `go test ./commands/httpapi -run TestAccessTableDocumented -rewrite` -->\n"
	tableEnd   = "<!-- end of the access table -->\n"
)

// TestAccessTableDocumented: docs/acl.md's access table is routeAccess,
// every route with its requirement (-rewrite regenerates it).
func TestAccessTableDocumented(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "acl.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(tableBegin)), bytes.Index(doc, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no access table between %q and %q", path, tableBegin, tableEnd)
	}
	want := accessTable()
	got := string(doc[i+len(tableBegin) : j])
	if got == want {
		return
	}
	if *rewrite {
		out := slices.Concat(doc[:i+len(tableBegin)], []byte(want), doc[j:])
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's access table differs from routeAccess; run with -rewrite", path)
}

// accessTable renders routeAccess as a markdown table, by path then method.
func accessTable() string {
	routes := make([]string, 0, len(routeAccess))
	for r := range routeAccess {
		routes = append(routes, r)
	}
	slices.SortFunc(routes, func(a, b string) int {
		ma, pa, _ := strings.Cut(a, " ")
		mb, pb, _ := strings.Cut(b, " ")
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return strings.Compare(ma, mb)
	})
	var b strings.Builder
	b.WriteString("| Route | Needs |\n|---|---|\n")
	for _, r := range routes {
		need := describe(routeAccess[r])
		if a := routeAccess[r]; a.inHandler != "" && !a.topics && strings.HasPrefix(r, "GET ") {
			need = "`" + a.inHandler + "` in `?namespace`; with `*`, each item's namespace" // a list with no body
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", r, need)
	}
	return b.String()
}

// describe says what a requires, in the docs' words.
func describe(a access) string {
	lvl := func(rule string, l level) string {
		return map[level]string{read: rule + ": read", write: rule + ": write"}[l]
	}
	switch {
	case a.clusterOnly:
		return "the cluster secret (`X-Ordo-Cluster-Secret`), in every mode; no token is read"
	case a.cluster && a.management:
		return "the cluster secret, or management (with ACLs off: the cluster secret)"
	case a.public:
		return "nothing (no token is read)"
	case a.anyone:
		return "any caller, anonymous included"
	case a.token:
		return "any token"
	case a.nodeAlloc && a.management:
		return "management; or, naming `?node_id`, the client agent of the node the allocation runs on (checked by the handler: a live allocation on that node), for its templates"
	case a.management:
		return "management"
	case a.ns != "":
		return "`" + a.ns + "` in `?namespace`"
	case a.nsPath != "":
		return "any access to the namespace `{" + a.nsPath + "}`"
	case a.node != none:
		return lvl("node", a.node)
	case a.agent != none:
		return lvl("agent", a.agent)
	case a.operator != none:
		return lvl("operator", a.operator)
	case a.vars != "":
		return "variables `" + a.vars + "` on the path, in `?namespace`"
	case a.topics:
		return "per topic asked for, as Nomad: management for `*` (no topic) and the ACL and NodePool topics; `read-job` in `?namespace` for Job, Allocation, Evaluation, Deployment, Service; node: read for Node"
	case a.inHandler != "":
		return "`" + a.inHandler + "` in the body's namespace"
	}
	return "management (no requirement set)"
}
