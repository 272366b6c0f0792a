package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
)

// TestVarCLI runs ordo var put/get/list/purge against a dev agent: items
// from arguments and from a JSON file, -item, -cas refusals, namespaces,
// and namespace apply -variables-quota.
func TestVarCLI(t *testing.T) {
	_, addr := startJobAgent(t)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(append(args, "-address", addr)...)
		if code != want {
			t.Fatalf("ordo %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out + errOut
	}
	// The first root key appears just after the leader starts.
	if !waittest.Poll(10*time.Second, func() bool {
		code, _, _ := runCLI("var", "put", "-address", addr, "-cas", "0", "app/db", "user=app", "password=hunter2")
		return code == 0
	}) {
		run(0, "var", "put", "-cas", "0", "app/db", "user=app", "password=hunter2") // fails, with the CLI's output
	}
	if out := run(1, "var", "put", "-cas", "0", "app/db", "password=x"); !strings.Contains(out, "already exists at modify index") {
		t.Fatalf("cas 0 on an existing variable: %s", out)
	}
	if out := run(0, "var", "get", "-item", "password", "app/db"); out != "hunter2\n" {
		t.Fatalf("get -item: %q", out)
	}
	out := run(0, "var", "get", "app/db")
	for _, want := range []string{"Path", "app/db", "Items", "user", "app", "password", "hunter2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("get shows no %q:\n%s", want, out)
		}
	}
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{"Items": {"cert": "PEM", "key": "old"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run(0, "namespace", "apply", "-variables-quota", "64KiB", "team-a")
	if out := run(0, "namespace", "status", "team-a"); !strings.Contains(out, "65536 bytes") {
		t.Fatalf("namespace status:\n%s", out)
	}
	run(0, "var", "put", "-namespace", "team-a", "-in", "json", "tls/web", spec, "key=new")
	if out := run(0, "var", "get", "-namespace", "team-a", "-item", "key", "tls/web"); out != "new\n" {
		t.Fatalf("argument did not override the file: %q", out)
	}
	if out := run(0, "var", "list", "-namespace", "team-a"); !strings.Contains(out, "tls/web") || strings.Contains(out, "PEM") {
		t.Fatalf("list:\n%s", out)
	}
	if out := run(0, "var", "list", "app/"); !strings.Contains(out, "app/db") || strings.Contains(out, "tls/web") {
		t.Fatalf("list app/:\n%s", out)
	}
	if out := run(1, "namespace", "delete", "team-a"); !strings.Contains(out, `still holds 1 variable`) {
		t.Fatalf("namespace delete with a variable: %s", out)
	}
	if out := run(1, "var", "put", "bad.path", "k=v"); !strings.Contains(out, "path") {
		t.Fatalf("bad path: %s", out)
	}
	run(0, "var", "purge", "app/db")
	if out := run(1, "var", "get", "app/db"); !strings.Contains(out, "not found") {
		t.Fatalf("get after purge: %s", out)
	}
	run(0, "var", "purge", "-namespace", "team-a", "tls/web")
	run(0, "namespace", "delete", "team-a")
}
