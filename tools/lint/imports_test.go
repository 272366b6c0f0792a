package lint

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/ordoplane/ordo"

// layers orders the top-level packages: a package may import ordo
// packages of its own layer or lower ones only.
var layers = map[string]int{
	"storage":     0,
	"clock":       0, // the one Clock: servers' processors and the client both wait on it
	"logtee":      0, // the agent's log teed to monitor readers: servers and the client serve it
	"events":      1,
	"projections": 2,
	"api":         2, // the API's types and client: imported by the HTTP server and every caller
	"commands":    3,
	"processors":  4,
	"history":     4, // history tools sit beside the processors
	"client":      4, // the client agent talks to servers over HTTP
	"cmd":         5,
	"tools":       6,
	"test":        6,
}

// restricted lists third-party import prefixes and the ordo trees allowed to use them.
var restricted = map[string][]string{
	"github.com/cockroachdb/pebble": {"storage"},
	"github.com/hashicorp/raft":     {"storage"},
	"github.com/twmb/franz-go":      {"processors/mirror", "test", "tools"},
}

// pure lists trees whose production code must be deterministic: no clock
// reads, no randomness.
var pure = []string{"events", "projections", "commands/namespace", "commands/server", "commands/job", "commands/node", "commands/plan", "commands/alloc", "commands/deployment"}

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// listed holds the one `go list` of the module the tests share: each
// call costs a second or more of CPU, and the tree does not change
// during a run.
var listed struct {
	sync.Once
	pkgs []pkg
	err  error
}

// listPackages returns the module's packages (shared, read-only).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	listed.Do(func() { listed.pkgs, listed.err = goList() })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	return listed.pkgs
}

// goList lists the module's packages with the fields pkg holds (asking
// for those only spares go list computing the rest).
func goList() ([]pkg, error) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports", module+"/...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		return nil, fmt.Errorf("go list found only %d packages", len(pkgs))
	}
	return pkgs, nil
}

func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

func top(path string) string {
	r := rel(path)
	if i := strings.IndexByte(r, '/'); i >= 0 {
		return r[:i]
	}
	return r
}

func under(path string, trees []string) bool {
	r := rel(path)
	for _, t := range trees {
		if r == t || strings.HasPrefix(r, t+"/") {
			return true
		}
	}
	return false
}

func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		from, ok := layers[top(p.ImportPath)]
		if !ok {
			t.Errorf("%s: top-level directory %q is not in the fixed layout", p.ImportPath, top(p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if to := layers[top(imp)]; to > from {
				t.Errorf("%s imports %s: %s may not depend on %s", rel(p.ImportPath), rel(imp), top(p.ImportPath), top(imp))
			}
		}
	}
}

func TestRestrictedImports(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			for prefix, allowed := range restricted {
				if strings.HasPrefix(imp, prefix) && !under(p.ImportPath, allowed) {
					t.Errorf("%s imports %s: only %v may", rel(p.ImportPath), imp, allowed)
				}
			}
			if imp == "testing" && !isTestHelper(p.ImportPath) && top(p.ImportPath) != "test" {
				t.Errorf("%s: production code imports testing", rel(p.ImportPath))
			}
		}
	}
}

func TestPurePackages(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, pure) || isTestHelper(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if imp == "math/rand" || imp == "math/rand/v2" || imp == "crypto/rand" {
				t.Errorf("%s imports %s: pure packages take their randomness as input", rel(p.ImportPath), imp)
			}
		}
		for _, f := range p.GoFiles {
			fset, file := parseFile(t, filepath.Join(p.Dir, f))
			checkTimeCalls(t, fset, file, map[string]bool{"Now": true, "Since": true}, "pure packages use the leader time in the entry")
		}
	}
}

func TestEveryPackageHasDoc(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.HasPrefix(rel(p.ImportPath), "cmd/ordo") || top(p.ImportPath) == "test" {
			continue
		}
		fset := token.NewFileSet()
		found := false
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if d := file.Doc.Text(); strings.HasPrefix(d, "Package ") || strings.HasPrefix(d, "Command ") {
				found = true
			}
		}
		if !found && len(p.GoFiles) > 0 {
			t.Errorf("%s has no package doc comment", rel(p.ImportPath))
		}
	}
}

// isTestHelper reports a <pkg>test helper package, which may import testing.
func isTestHelper(path string) bool {
	return strings.HasSuffix(path, "test") && !strings.HasSuffix(path, "/test")
}
