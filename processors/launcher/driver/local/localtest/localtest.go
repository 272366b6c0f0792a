// Package localtest helps tests of the local driver: it builds the ordo
// binary the driver launches, and (BuildPackage) any other main package
// of the module a test runs as a process, such as tools/csi-hostpath.
package localtest

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
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
	bin, err := BuildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildBinary is Build for callers without a testing.TB (a TestMain).
// Packages that build at the same time wait on a lock file, so the one
// that links it first serves the others (a link is seconds of CPU).
func BuildBinary() (string, error) {
	return BuildPackage("github.com/ordoplane/ordo/cmd/ordo")
}

// BuildPackageT is BuildPackage failing t on an error.
func BuildPackageT(t testing.TB, importPath string) string {
	t.Helper()
	bin, err := BuildPackage(importPath)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildPackage builds the main package importPath as Build builds
// cmd/ordo: once per version of its sources for all the test packages of
// a run, kept under the system's temporary directory. The binary is named
// for the package's last path element.
func BuildPackage(importPath string) (string, error) {
	name := path.Base(importPath)
	out, err := exec.Command("go", "list", "-export", "-f", "{{.Export}}", importPath).Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w", importPath, err)
	}
	key := filepath.Base(strings.TrimSpace(string(out)))
	if key == "" || key == "." {
		return "", fmt.Errorf("go list %s: no export file", importPath)
	}
	root := filepath.Join(os.TempDir(), "ordo-localtest")
	bin := filepath.Join(root, key, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(root, key, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built while this one waited
	}
	tmpDir, err := os.MkdirTemp("", "ordo-localtest-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, name)
	if out, err := exec.Command("go", "build", "-o", tmp, importPath).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", importPath, err, out)
	}
	// Copy, then rename within the directory: a concurrent test sees the
	// whole binary or none.
	part := bin + ".part" + filepath.Base(tmpDir)
	b, err := os.ReadFile(tmp)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(part, b, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(part, bin); err != nil {
		return "", err
	}
	prune(root, key)
	return bin, nil
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
