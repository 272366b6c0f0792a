package services_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/events"
)

// hostPort splits a listener's address.
func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func TestHTTPCheck(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	code := 200
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" host="+r.Host+" x="+r.Header.Get("X-Probe")+" body="+string(body))
		c := code
		mu.Unlock()
		w.WriteHeader(c)
		io.WriteString(w, "fine")
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.Listener.Addr().String())
	c := &services.Check{ServiceCheck: events.ServiceCheck{Type: events.CheckTypeHTTP, Path: "health", Method: "POST",
		Body: "ping", Header: map[string][]string{"X-Probe": {"1"}, "Host": {"web.example"}}, Timeout: 2 * time.Second},
		Address: host, Port: port}
	hc := &http.Client{}
	for _, step := range []struct {
		code int
		want string
	}{{200, pass}, {429, warn}, {500, crit}, {204, pass}} {
		mu.Lock()
		code = step.code
		mu.Unlock()
		res := services.RunCheck(context.Background(), c, hc, nil)
		if res.Status != step.want {
			t.Fatalf("HTTP %d: status %s (%s), want %s", step.code, res.Status, res.Output, step.want)
		}
	}
	mu.Lock()
	if want := "POST /health host=web.example x=1 body=ping"; seen[0] != want {
		t.Errorf("request %q, want %q", seen[0], want)
	}
	mu.Unlock()

	// A server that answers too late is critical, within the timeout.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	host, port = hostPort(t, slow.Listener.Addr().String())
	res := services.RunCheck(context.Background(), &services.Check{ServiceCheck: events.ServiceCheck{Type: events.CheckTypeHTTP,
		Timeout: 50 * time.Millisecond}, Address: host, Port: port}, hc, nil)
	if res.Status != crit {
		t.Fatalf("slow server: %s", res.Status)
	}
}

func TestTCPCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port := hostPort(t, ln.Addr().String())
	c := &services.Check{ServiceCheck: events.ServiceCheck{Type: events.CheckTypeTCP, Timeout: time.Second}, Address: host, Port: port}
	if res := services.RunCheck(context.Background(), c, nil, nil); res.Status != pass {
		t.Fatalf("listening: %s (%s)", res.Status, res.Output)
	}
	ln.Close()
	if res := services.RunCheck(context.Background(), c, nil, nil); res.Status != crit {
		t.Fatalf("closed: %s (%s)", res.Status, res.Output)
	}
}

// hostExecer is a task whose driver cannot exec: script checks run as
// processes with its environment and directory.
type hostExecer struct {
	env map[string]string
	dir string
}

func (h hostExecer) Exec(context.Context, string, driver.ExecRequest) (int, error) {
	return -1, allocrunner.ErrExecUnsupported
}

func (h hostExecer) TaskExecEnv(string) (map[string]string, string, error) { return h.env, h.dir, nil }

func TestScriptCheck(t *testing.T) {
	dir := t.TempDir()
	x := hostExecer{env: map[string]string{"CODE": "0", "PATH": "/usr/bin:/bin"}, dir: dir}
	script := func(code string) *services.Check {
		return &services.Check{ServiceCheck: events.ServiceCheck{Type: events.CheckTypeScript, Command: "/bin/sh",
			Args: []string{"-c", `echo "in $PWD"; exit ` + code}, Timeout: 2 * time.Second, TaskName: "server"}}
	}
	for code, want := range map[string]string{"$CODE": pass, "1": warn, "2": crit} {
		res := services.RunCheck(context.Background(), script(code), nil, x)
		if res.Status != want {
			t.Errorf("exit %s: %s (%s), want %s", code, res.Status, res.Output, want)
		}
		if !strings.Contains(res.Output, "in "+dir) {
			t.Errorf("exit %s: output %q does not show the task's directory", code, res.Output)
		}
	}
	slow := &services.Check{ServiceCheck: events.ServiceCheck{Type: events.CheckTypeScript, Command: "/bin/sleep",
		Args: []string{"5"}, Timeout: 50 * time.Millisecond, TaskName: "server"}}
	if res := services.RunCheck(context.Background(), slow, nil, x); res.Status != crit || !strings.Contains(res.Output, "timed out") {
		t.Fatalf("slow script: %s (%s)", res.Status, res.Output)
	}
}
