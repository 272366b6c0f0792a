// This file holds the crash-consistency test: a dev server in a child
// process is killed with SIGKILL under write load and restarted on the same
// data directory, and every acknowledged write must have survived exactly
// once with projections equal to a rebuild from the archive.

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/test/testagent"
	"github.com/ordoplane/ordo/test/testlog"
)

// The child process is this test binary running TestCrashChild with these
// variables set.
const (
	envChild    = "ORDO_CRASH_CHILD"
	envDataDir  = "ORDO_CRASH_DATA_DIR"
	envHTTPAddr = "ORDO_CRASH_HTTP_ADDR"
	envRaftAddr = "ORDO_CRASH_RAFT_ADDR"
	// envSeed replays a run: TestCrash logs the seed it used.
	envSeed = "ORDO_CRASH_SEED"
)

// crashTimeout bounds every wait: generous, for a loaded two-core machine under -race.
const crashTimeout = 20 * time.Second

// writers is how many goroutines write during a round.
const writers = 16

// TestCrashChild is the server TestCrash kills: a dev agent on the data
// directory and addresses it is given, with the raft log synced, serving
// until SIGTERM (a clean stop) or SIGKILL.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		t.Skip("the server process of TestCrash; run only as its child")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg := agent.DevConfig()
	cfg.DataDir = os.Getenv(envDataDir)
	cfg.HTTPAddr = os.Getenv(envHTTPAddr)
	cfg.RaftAddr = os.Getenv(envRaftAddr)
	cfg.RaftTimeout = 200 * time.Millisecond
	cfg.JoinInterval = 100 * time.Millisecond
	cfg.NoSync = false
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.RaftLogOutput = os.Stderr
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	<-ctx.Done()
	if err := a.Shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// child is one run of the server process.
type child struct {
	cmd  *exec.Cmd
	out  *testlog.Buffer
	done chan struct{} // closed when the process has exited
	err  error         // cmd.Wait's result, after done
}

func startChild(t *testing.T, dataDir, httpAddr, raftAddr string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), envChild+"=1", envDataDir+"="+dataDir, envHTTPAddr+"="+httpAddr, envRaftAddr+"="+raftAddr)
	c := &child{cmd: cmd, out: &testlog.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		if !c.exited() {
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("child %d output:\n%s", cmd.Process.Pid, c.out.String())
		}
	})
	return c
}

// restartChild starts the child again on the addresses the killed one
// had: a port just released may be taken a moment by another process's
// outgoing connection, so a child that exits with "address already in
// use" before it listens is started again.
func restartChild(t *testing.T, dataDir, httpAddr, raftAddr string) *child {
	t.Helper()
	var c *child
	if !testagent.Poll(testagent.ServerTimeout, func() bool {
		c = startChild(t, dataDir, httpAddr, raftAddr)
		testagent.Poll(testagent.ServerTimeout, func() bool { return c.exited() || listening(httpAddr) })
		return !c.exited() || !strings.Contains(c.out.String(), "address already in use")
	}) {
		t.Fatalf("restart on %s and %s: the addresses stay in use:\n%s", httpAddr, raftAddr, c.out.String())
	}
	return c
}

// listening reports whether something accepts connections on addr.
func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !c.exited() {
		t.Fatalf("kill child: %v", err)
	}
	<-c.done
	c.checkOutput(t)
}

// stop sends SIGTERM and waits for a clean exit.
func (c *child) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !c.exited() {
		t.Fatalf("stop child: %v", err)
	}
	select {
	case <-c.done:
	case <-time.After(crashTimeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("child did not stop within %v of SIGTERM", crashTimeout)
	}
	c.checkOutput(t)
	if c.err != nil {
		t.Fatalf("child exited with %v:\n%s", c.err, c.out.String())
	}
}

// checkOutput fails t when the child reported a data race or a panic.
func (c *child) checkOutput(t *testing.T) {
	t.Helper()
	out := c.out.String()
	for _, bad := range []string{"WARNING: DATA RACE", "panic:", "fatal error:"} {
		if strings.Contains(out, bad) {
			t.Fatalf("child output holds %q:\n%s", bad, out)
		}
	}
}

// freeAddrs returns n distinct 127.0.0.1 addresses whose ports were free a
// moment ago: all are held open until all are chosen.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

// waitServing waits until the child answers with a leader and has the
// default namespace, then until it has applied at least min; an applied
// index that stays below min fails t (the checks that follow name the
// writes that are missing).
func waitServing(t *testing.T, c *testagent.Client, ch *child, addr string, min uint64) {
	t.Helper()
	testagent.WaitFor(t, crashTimeout, "the server to serve", func() bool {
		if ch.exited() {
			return true
		}
		if !c.Healthy(addr) {
			return false
		}
		code, err := c.GetJSON(addr, "/v1/namespace/default", nil)
		return err == nil && code == http.StatusOK
	})
	if ch.exited() {
		t.Fatalf("child exited (%v) before serving:\n%s", ch.err, ch.out.String())
	}
	var applied uint64
	var err error
	if !testagent.Poll(crashTimeout, func() bool {
		applied, err = c.AppliedIndex(addr)
		return err == nil && applied >= min
	}) {
		t.Errorf("after %v the restarted server's applied index is %d (err %v), below the last acknowledged index %d",
			crashTimeout, applied, err, min)
	}
}

// TestCrash kills a server with SIGKILL under write load, restarts it on
// the same data directory and checks that every acknowledged write
// survived exactly once and that the projections equal a rebuild from the
// archive. Rounds share the data directory, so state accumulates: three
// (ten with -long), each a kill at a random point of a write load and two
// restarts of a race-built server, about 2 CPU-s a round.
func TestCrash(t *testing.T) {
	if os.Getenv(envChild) == "1" {
		t.Skip("this is the child process")
	}
	rounds := 3
	if testagent.Long() {
		rounds = 10
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(envSeed); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", envSeed, v, err)
		}
	}
	t.Logf("seed %d (%s=%d replays the crash points)", seed, envSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6f72646f))

	dataDir := t.TempDir()
	addrs := freeAddrs(t, 2)
	httpAddr, raftAddr := addrs[0], addrs[1]
	c := testagent.NewClient(5 * time.Second)
	defer c.Close()
	acks := testagent.NewAcks()

	ch := startChild(t, dataDir, httpAddr, raftAddr)
	waitServing(t, c, ch, httpAddr, 0)
	for round := range rounds {
		crashAfter := 50*time.Millisecond + time.Duration(rng.Int64N(int64(350*time.Millisecond)))
		before := acks.Len()
		inFlight := load(t, c, ch, httpAddr, round, crashAfter, acks)
		t.Logf("round %d: SIGKILL %v into the load; %d writes acknowledged (%d in all), %d cut off",
			round, crashAfter, acks.Len()-before, acks.Len(), inFlight)
		if acks.Len() == before {
			t.Logf("round %d: no write was acknowledged before the crash", round)
		}
		if t.Failed() {
			t.FailNow()
		}
		checkCrashedStore(t, dataDir, round, acks.Names())

		restart := time.Now()
		ch = restartChild(t, dataDir, httpAddr, raftAddr)
		waitServing(t, c, ch, httpAddr, acks.Max())
		t.Logf("round %d: restarted and caught up with index %d in %v", round, acks.Max(), time.Since(restart).Round(time.Millisecond))
		checkLive(t, c, httpAddr, acks.Names())

		ch.stop(t)
		checkStore(t, dataDir, acks)
		if t.Failed() {
			t.FailNow()
		}
		if round < rounds-1 {
			ch = startChild(t, dataDir, httpAddr, raftAddr)
			waitServing(t, c, ch, httpAddr, acks.Max())
		}
	}
}

// load runs writers goroutines writing unique namespaces to addr and kills
// the child crashAfter after they start. It waits for every writer to end
// (each ends at its first failed write) and returns how many writes the
// crash cut off.
func load(t *testing.T, c *testagent.Client, ch *child, addr string, round int, crashAfter time.Duration, acks *testagent.Acks) int {
	t.Helper()
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel, when t.Fatal ends the round early
	ctx, cancel := context.WithTimeout(context.Background(), crashTimeout)
	defer cancel()
	killed := make(chan struct{})
	var unanswered atomic.Int64
	for g := range writers {
		wg.Go(func() {
			// Write until the crash makes a write fail, so that writes are
			// in flight when the process dies.
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("r%02d-g%02d-%06d", round, g, i)
				res, err := c.PutNamespace(ctx, addr, name, "key-"+name)
				switch {
				case err == nil && res.Status == http.StatusOK:
					acks.Add(name, res.Index)
				case err == nil && res.Status < 500:
					t.Errorf("write %s: %d %s", name, res.Status, res.Body)
					return
				default:
					// No answer, or a server error: not acknowledged. Before
					// the kill this is unexpected on a single healthy server.
					unanswered.Add(1)
					select {
					case <-killed:
					default:
						t.Errorf("write %s before the crash: status %d %q, err %v", name, res.Status, res.Body, err)
					}
					return
				}
			}
		})
	}
	timer := time.NewTimer(crashAfter)
	<-timer.C
	close(killed) // from here on a failed write is expected
	ch.kill(t)
	wg.Wait()
	return int(unanswered.Load())
}

// copyDir copies the regular files under src into dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// checkCrashedStore opens a copy of the state store as the crash left it
// (so the restarted server still finds the original) and checks that it
// holds whole entries: projections equal a rebuild from its archive, no
// write is archived twice, and the archive does not run past the applied
// index. Acknowledged writes may be missing: the state store is not synced,
// and raft replays them on restart.
func checkCrashedStore(t *testing.T, dataDir string, round int, acked map[string]uint64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := copyDir(filepath.Join(dataDir, "state"), dir); err != nil {
		t.Fatalf("copy state store: %v", err)
	}
	st, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatalf("open crashed state store: %v", err)
	}
	defer st.Close()
	counts, err := testagent.Upserts(st)
	if err != nil {
		t.Fatalf("crashed store: %v", err)
	}
	var dup, missing int
	for name, n := range counts {
		if n > 1 {
			dup++
			t.Errorf("round %d, crashed store: %s upserted %d times", round, name, n)
		}
	}
	for name := range acked {
		if counts[name] == 0 {
			missing++
		}
	}
	testagent.CheckProjections(t, st, t.TempDir())
	applied, err := projections.NewView(st).AppliedIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := archive.Last(st)
	if err != nil {
		t.Fatal(err)
	}
	if last > applied {
		t.Errorf("round %d, crashed store: archive reaches index %d past the applied index %d", round, last, applied)
	}
	t.Logf("round %d: crashed state store at index %d; %d acknowledged writes await replay from the raft log", round, applied, missing)
}

// checkLive checks the restarted server through its API: every acknowledged
// write archived exactly once and listed.
func checkLive(t *testing.T, c *testagent.Client, addr string, acked map[string]uint64) {
	t.Helper()
	counts, err := c.LogUpserts(addr)
	if err != nil {
		t.Fatal(err)
	}
	testagent.CheckAcked(t, "/v1/operator/log after restart", acked, counts)
	listed, err := c.NamespaceNames(addr, false)
	if err != nil {
		t.Fatal(err)
	}
	testagent.CheckListed(t, "/v1/namespaces after restart", acked, listed)
}

// checkStore opens the state store of the stopped server and checks every
// acknowledged write archived exactly once and listed, the projections
// equal to a rebuild, and the applied index at least the last acknowledged one.
func checkStore(t *testing.T, dataDir string, acks *testagent.Acks) {
	t.Helper()
	st, err := kv.Open(filepath.Join(dataDir, "state"), kv.DefaultConfig())
	if err != nil {
		t.Fatalf("open state store: %v", err)
	}
	defer func() {
		if err := st.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
			t.Error(err)
		}
	}()
	acked := acks.Names()
	counts, err := testagent.Upserts(st)
	if err != nil {
		t.Fatal(err)
	}
	testagent.CheckAcked(t, "state store", acked, counts)
	listed, err := testagent.StoreNamespaces(st)
	if err != nil {
		t.Fatal(err)
	}
	testagent.CheckListed(t, "namespaces projection", acked, listed)
	testagent.CheckProjections(t, st, t.TempDir())
	applied, err := projections.NewView(st).AppliedIndex()
	if err != nil {
		t.Fatal(err)
	}
	if applied < acks.Max() {
		t.Errorf("applied index %d is below the last acknowledged index %d", applied, acks.Max())
	}
}
