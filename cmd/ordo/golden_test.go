package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/clock/clocktest"
)

// goldenNow is the fixed time of the golden CLI tests: relative times are
// measured from it.
var goldenNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestCLIGolden runs the scripts of testdata/cli against a fake server
// with a fixed clock (datadriven; rewrite the expectations with -rewrite):
//
//	serve <path> [status=<code>]   the server answers GET/PUT <path> (any
//	<JSON body>                    query) with this body; the rest is 404
//	ordo [env=K=V,...] [brief]     run the command line of the input with
//	<args>                         -address set to the fake server (unless
//	                               the environment names one); the output
//	                               is the exit code, stdout and stderr (with
//	                               brief, only stderr's first line, usage
//	                               line and errors: help text changes as
//	                               verbs are added)
//	requests                       the requests of the last ordo command
//
// A read with at_index answers X-Ordo-At-Index with it, one with at_time
// with 42.
//
// The scripts pin Nomad's output conventions: short ids and -verbose,
// relative times, human sizes, -json and -t, exit codes, banners.
func TestCLIGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/cli", func(t *testing.T, path string) {
		srv := newGoldenServer(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "serve":
				status := http.StatusOK
				if arg, ok := d.Arg("status"); ok {
					fmt.Sscan(arg.Vals[0], &status)
				}
				srv.set(d.CmdArgs[0].Key, status, d.Input)
				return ""
			case "ordo":
				env := map[string]string{}
				if arg, ok := d.Arg("env"); ok {
					for _, kv := range arg.Vals {
						k, v, _ := strings.Cut(kv, "=")
						env[k] = v
					}
				}
				if lookupEnv(func(k string) string { return env[k] }, "ADDR") == "" {
					env["ORDO_ADDR"] = srv.url
				}
				srv.reset()
				args := strings.Fields(d.Input)
				var out, errOut bytes.Buffer
				code := runWith(args, &out, &errOut, withGetenv(func(k string) string { return env[k] }),
					withClock(clocktest.NewClock(goldenNow)))
				stderr := errOut.String()
				if d.HasArg("brief") {
					stderr = briefHelp(stderr)
				}
				o := fmt.Sprintf("exit %d\n%s%s", code, out.String(), prefixLines("stderr: ", stderr))
				return strings.ReplaceAll(o, srv.url, "http://fake")
			case "requests":
				return srv.requests()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// briefHelp keeps of a help text its first line, the line after
// "Usage:" and the "Error:" lines.
func briefHelp(s string) string {
	lines := strings.Split(s, "\n")
	var keep []string
	for i, l := range lines {
		if i == 0 || strings.HasPrefix(l, "Error:") || (i > 0 && lines[i-1] == "Usage:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n") + "\n"
}

// prefixLines puts prefix before every line of s.
func prefixLines(prefix, s string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// goldenServer answers fixed bodies by path and records requests.
type goldenServer struct {
	url string
	mu  sync.Mutex
	// answers by path.
	answers map[string]goldenAnswer
	seen    []string
}

type goldenAnswer struct {
	status int
	body   string
}

func newGoldenServer(t *testing.T) *goldenServer {
	g := &goldenServer{answers: map[string]goldenAnswer{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		line := r.Method + " " + r.URL.RequestURI()
		for _, h := range []string{"X-Nomad-Token"} {
			if v := r.Header.Get(h); v != "" {
				line += " " + h + "=" + v
			}
		}
		if len(body) > 0 {
			line += " " + string(bytes.TrimSpace(body))
		}
		g.seen = append(g.seen, line)
		a, ok := g.answers[r.URL.Path]
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Nomad-Index", "10")
		// A read of the past answers from the index asked, or from 42 for
		// any -at-time.
		if at := r.URL.Query().Get("at_index"); at != "" {
			w.Header().Set("X-Ordo-At-Index", at)
		} else if r.URL.Query().Has("at_time") {
			w.Header().Set("X-Ordo-At-Index", "42")
		}
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"Error":"%s not found","Status":404}`, r.URL.Path)
			return
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

func (g *goldenServer) set(path string, status int, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answers[path] = goldenAnswer{status, body}
}

func (g *goldenServer) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen = nil
}

func (g *goldenServer) requests() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(slices.Clone(g.seen), "\n") + "\n"
}
