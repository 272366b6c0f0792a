// Package localtest helps tests of the local driver: it builds the ordo
// binary the driver launches.
package localtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Build builds cmd/ordo and returns the binary's path. The binary is
// kept under the system's temporary directory, keyed by the build cache's
// id of the compiled main package (which changes with any dependency),
// so the test packages of one `go test ./...` run link it once; older
// binaries are removed.
func Build(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-f", "{{.Export}}", "github.com/ordoplane/ordo/cmd/ordo").Output()
	if err != nil {
		t.Fatalf("go list cmd/ordo: %v", err)
	}
	key := filepath.Base(strings.TrimSpace(string(out)))
	if key == "" || key == "." {
		t.Fatalf("go list cmd/ordo: no export file")
	}
	root := filepath.Join(os.TempDir(), "ordo-localtest")
	bin := filepath.Join(root, key, "ordo")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "ordo")
	if out, err := exec.Command("go", "build", "-o", tmp, "github.com/ordoplane/ordo/cmd/ordo").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/ordo: %v\n%s", err, out)
	}
	// Copy, then rename within the directory: a concurrent test sees the
	// whole binary or none.
	part := bin + ".part" + filepath.Base(t.TempDir())
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(part, bin); err != nil {
		t.Fatal(err)
	}
	prune(root, key)
	return bin
}

// prune removes the binaries of other keys older than an hour.
func prune(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == keep {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}
