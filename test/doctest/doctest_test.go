package doctest_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/doctest"
	"github.com/ordoplane/ordo/test/testlog"
)

// root is the repository, from this package's directory.
const root = "../.."

// docTimeout bounds one doc's script. A page takes a few seconds to
// twenty (those that run a job wait for its deployment); all the pages
// run at once, one agent each, so a loaded machine stretches each.
const docTimeout = 90 * time.Second

// planOnly are the jobspecs no doc runs on a dev agent, and why; every
// other jobspec in docs/examples must be run by some doc's runnable block.
var planOnly = map[string]string{
	"docs/examples/web.hcl":            "three allocations on distinct hosts: the dev agent has one node",
	"docs/examples/web.json":           "web.hcl as API JSON: three distinct hosts",
	"docs/examples/csi/csi-plugin.hcl": "runs tools/csi-hostpath, built by TestVolumeLifecycle (test/client), which runs it",
	"docs/examples/csi/db.hcl":         "needs the csi-hostpath plugin and its volume (TestVolumeLifecycle in test/client)",
}

// notRun are the other files in docs/examples (agent files, volume
// specs) that no doc's runnable block uses, and why; every other one must
// be used by one.
var notRun = map[string]string{
	"docs/examples/agent.hcl":      "an agent file for three servers (cmd/ordo TestExampleAgentFileLimits reads it)",
	"docs/examples/csi/volume.hcl": "a volume spec for the csi-hostpath plugin (commands/csi and test/client's TestVolumeLifecycle read it)",
}

// jobBlock matches a top-level job block.
var jobBlock = regexp.MustCompile(`(?m)^job\s+"`)

// jobspec reports whether an example file is a jobspec: JSON (Nomad's
// API shape), or HCL with a top-level job block.
func jobspec(path string) (bool, error) {
	if strings.HasSuffix(path, ".json") {
		return true, nil
	}
	b, err := os.ReadFile(path)
	return jobBlock.Match(b), err
}

// TestDocs runs every runnable block of README.md and docs/*.md, one
// bash per doc against its own dev agent, and fails naming the doc, line
// and command of the first command that fails.
//
// The docs run all at once, each subtest on a goroutine of its own
// rather than through t.Parallel: a doc spends its time waiting (on a
// deployment, a stream's --max-time, a task's shutdown delay), and
// -test.parallel, which defaults to GOMAXPROCS (2 here), would run them
// two at a time.
func TestDocs(t *testing.T) {
	t.Parallel() // beside TestExamples, which waits on its own agent
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' commands need %s on PATH: %v", tool, err)
		}
	}
	bin := ordoBin(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	var wg sync.WaitGroup
	for _, path := range docs {
		name, _ := filepath.Rel(root, path)
		wg.Go(func() {
			t.Run(name, func(t *testing.T) {
				script := readScript(t, path)
				if script == nil {
					return
				}
				addr := startAgent(t, bin)
				runScript(t, name, script, bin, addr)
			})
		})
	}
	wg.Wait()
}

// TestExamples plans every jobspec in docs/examples on a dev agent, and
// checks each example file is run by a doc or says why it cannot be.
func TestExamples(t *testing.T) {
	t.Parallel()
	bin := ordoBin(t)
	var scripts strings.Builder
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, path := range append(docs, filepath.Join(root, "README.md")) {
		if s := readScript(t, path); s != nil {
			scripts.WriteString(s.Text)
		}
	}
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "docs", "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".hcl") || strings.HasSuffix(p, ".json")) {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := startAgent(t, bin)
	for _, f := range files {
		used := strings.Contains(scripts.String(), f)
		isJob, err := jobspec(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !isJob {
			if _, ok := notRun[f]; !ok && !used {
				t.Errorf("%s: no doc uses it; use it in a ```sh block, or say in notRun why a dev agent cannot", f)
			}
			continue
		}
		cmd := exec.Command(bin, "job", "plan", f)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "ORDO_ADDR="+addr)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 {
			t.Errorf("ordo job plan %s: exit %d (want 0 or 1): %v\n%s", f, code, err, out)
		}
		if _, ok := planOnly[f]; !ok && !used {
			t.Errorf("%s: no doc runs it; run it in a ```sh block, or say in planOnly why a dev agent cannot", f)
		}
	}
	for _, list := range []map[string]string{planOnly, notRun} {
		for f := range list {
			if !slices.Contains(files, f) {
				t.Errorf("%s is listed, but not in docs/examples", f)
			}
		}
	}
}

// readScript returns the script of path's runnable blocks, nil if none;
// a block breaking the convention fails the test.
func readScript(t *testing.T, path string) *doctest.Script {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blocks, err := doctest.Blocks(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !slices.ContainsFunc(blocks, doctest.Block.Runnable) {
		return nil
	}
	return doctest.NewScript(blocks)
}

// built is the binary ordoBin built for this run.
var built struct {
	sync.Once
	bin string
}

// ordoBin returns the ordo binary the docs run, in a directory of its own
// (put first on the scripts' PATH): cmd/ordo built from the tree, shared
// with the other test packages that build it (localtest.Build links it
// once per code version), or the binary $ORDO_BIN names.
func ordoBin(t *testing.T) string {
	t.Helper()
	b := os.Getenv("ORDO_BIN")
	if b == "" {
		// Once per run: the tests share the binary even when the tree
		// changes meanwhile.
		built.Do(func() { built.bin = localtest.Build(t) })
		if built.bin == "" {
			t.Fatal("building cmd/ordo failed in an earlier test")
		}
		return built.bin
	}
	abs, err := filepath.Abs(b)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ordo")
	if err := os.Symlink(abs, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

var httpAddr = regexp.MustCompile(`HTTP Addr: (\S+)`)

// startAgent starts `ordo agent -dev` on free loopback ports, waits until
// its client's node is ready, and stops it when the test ends. It returns
// the API's address as ORDO_ADDR takes it.
func startAgent(t *testing.T, bin string) string {
	t.Helper()
	var log testlog.Buffer
	cmd := exec.Command(bin, "agent", "-dev", "-http-addr", "127.0.0.1:0", "-raft-addr", "127.0.0.1:0", "-raft-timeout", "100ms")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	var addr string
	waittest.For(t, 20*time.Second, "the dev agent's address", func() bool {
		if m := httpAddr.FindStringSubmatch(log.String()); m != nil {
			addr = "http://" + m[1]
		}
		return addr != ""
	})
	waittest.For(t, 20*time.Second, "the dev agent's node ready", func() bool {
		resp, err := http.Get(addr + "/v1/nodes")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == 200 && strings.Contains(string(body), `"Status":"ready"`)
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent log:\n%s", tail(log.String(), 40))
		}
	})
	return addr
}

// runScript runs s with bash in a scratch directory that links docs/ (the
// docs name examples as docs/examples/…), the ordo binary first on PATH
// and ORDO_ADDR set.
func runScript(t *testing.T, doc string, s *doctest.Script, bin, addr string) {
	t.Helper()
	dir := t.TempDir()
	docsDir, err := filepath.Abs(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(docsDir, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), docTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", s.Text, doc)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORDO_ADDR="+addr, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr testlog.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err == nil {
		return
	}
	if line, what, ok := s.Failure(stderr.String()); ok {
		t.Errorf("%s:%d: %s\n--- output (last lines):\n%s\n--- stderr:\n%s", doc, line, what, tail(stdout.String(), 30), tail(stderr.String(), 30))
		return
	}
	t.Errorf("%s: the script failed: %v (a timeout after %v?)\n--- output (last lines):\n%s\n--- stderr:\n%s", doc, err, docTimeout, tail(stdout.String(), 30), tail(stderr.String(), 30))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
