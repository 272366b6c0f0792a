package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// The simfleet figures run the server in a child process (this binary
// again, with childEnv set), so its CPU, open files and memory are
// measured apart from the simulated fleet's: both still share the
// machine's cores.

// childEnv carries the child server's spec as JSON.
const childEnv = "ORDO_BENCH_CHILD_SERVER"

// childSpec is what the child server is configured with.
type childSpec struct {
	// HeartbeatMinTTL and MaxHeartbeatsPerSecond: zero keeps the defaults.
	HeartbeatMinTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	// Workers is the scheduler workers; zero keeps the default.
	Workers int
}

// serveChild runs the child server: a dev agent (fsynced raft log, like
// the c1m figure) whose HTTP address is printed on stdout; it shuts down
// when stdin closes, so it dies with its parent.
func serveChild(spec string) int {
	var s childSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "ordo-bench-child-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cfg := agent.DevConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.HTTP.MaxConnsPerClient = -1 // load generators and simulated fleets all connect from 127.0.0.1
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	cfg.HeartbeatMinTTL = s.HeartbeatMinTTL
	cfg.MaxHeartbeatsPerSecond = s.MaxHeartbeatsPerSecond
	cfg.Scheduler.Workers = s.Workers
	a, err := agent.Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	defer a.Shutdown()
	fmt.Println(a.HTTPAddr())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// childServer is a server running in a child process.
type childServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

// startChild starts a child server and waits until it leads and serves
// the default namespace.
func startChild(spec childSpec) (*childServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &childServer{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("child server: %w", err)
	}
	c.addr = strings.TrimSpace(line)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if benchClient(c.addr).Get(context.Background(), "/v1/namespace/default", nil, nil) == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("child server at %s: no leader within 30s", c.addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *childServer) pid() int { return c.cmd.Process.Pid }

// stop closes the child's stdin and waits for it, killing it after 30s.
func (c *childServer) stop() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() {
		c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// cpuSeconds reads a process's user + system CPU time from
// /proc/<pid>/stat (pid 0: this process), in USER_HZ ticks of 1/100 s.
func cpuSeconds(pid int) (float64, error) {
	p := "self"
	if pid > 0 {
		p = strconv.Itoa(pid)
	}
	b, err := os.ReadFile("/proc/" + p + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	// Fields after the command name, which may hold spaces: state is the
	// first, utime the 12th and stime the 13th.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%s/stat", p)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%s/stat: %q %q", p, f[11], f[12])
	}
	return (ut + st) / 100, nil
}

// openFiles counts a process's open file descriptors (pid 0: this process).
func openFiles(pid int) int {
	p := "self"
	if pid > 0 {
		p = strconv.Itoa(pid)
	}
	ents, err := os.ReadDir("/proc/" + p + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// rssMB reads a process's resident set size in MiB (pid 0: this process).
func rssMB(pid int) float64 {
	p := "self"
	if pid > 0 {
		p = strconv.Itoa(pid)
	}
	b, err := os.ReadFile("/proc/" + p + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// scrape sums the samples of metric name in a server's /v1/metrics whose
// labels contain every one of labels (e.g. `code="OK"`).
func scrape(addr, name string, labels ...string) (float64, error) {
	body, err := benchClient(addr).Stream(context.Background(), "/v1/metrics", url.Values{"format": {"prometheus"}})
	if err != nil {
		return 0, err
	}
	defer body.Close()
	var sum float64
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue // a longer name
		}
		sp := strings.LastIndexByte(rest, ' ')
		for _, l := range labels {
			if !strings.Contains(rest[:sp], l) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(rest[sp+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}
