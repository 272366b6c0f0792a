package template_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/client/template/templatetest"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
)

// recorder collects a manager's events and changes.
type recorder struct {
	mu      sync.Mutex
	events  []events.TaskEvent
	changes chan template.Change
	evCh    chan events.TaskEvent
}

func newRecorder() *recorder {
	return &recorder{changes: make(chan template.Change, 16), evCh: make(chan events.TaskEvent, 64)}
}

func (r *recorder) event(ev events.TaskEvent) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.evCh <- ev
}

// start runs a manager of tmpls until the test ends.
func start(t *testing.T, src template.Source, rec *recorder, running bool, dir string, tmpls ...events.Template) *template.Manager {
	t.Helper()
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	return startClock(t, src, rec, running, dir, clk, tmpls...)
}

func startClock(t *testing.T, src template.Source, rec *recorder, running bool, dir string, clk *clocktest.Clock, tmpls ...events.Template) *template.Manager {
	t.Helper()
	m, err := template.New(template.Config{Templates: tmpls, TaskDir: dir, Namespace: "default", AllocID: "a1", Task: "web",
		Env: map[string]string{"NOMAD_TASK_NAME": "web", "NOMAD_TASK_DIR": dir + "/local"}, Source: src,
		Replace: func(s string) string { return strings.ReplaceAll(s, "${NOMAD_TASK_DIR}", dir+"/local") },
		Running: running, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnEvent: rec.event, OnChange: func(c template.Change) { rec.changes <- c }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func ready(t *testing.T, m *template.Manager) {
	t.Helper()
	select {
	case <-m.Ready():
	case err := <-m.Failed():
		t.Fatalf("template failed: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("templates never rendered")
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every function renders, with custom delimiters, perms and a source file
// relative to the task directory; the identity is presented.
func TestRenderFunctions(t *testing.T) {
	dir := t.TempDir()
	src := templatetest.New()
	src.Token = "jwt-1"
	src.PutVar("default", "nomad/jobs/web", map[string]string{"user": "app", "password": "hunter2"})
	src.PutVar("default", "nomad/jobs/web/extra", map[string]string{"k": "v"})
	src.SetService("default", "api",
		events.ServiceRegistration{ID: "s1", ServiceName: "api", Address: "10.0.0.1", Port: 8080, Tags: []string{"prod"}},
		events.ServiceRegistration{ID: "s2", ServiceName: "api", Address: "10.0.0.2", Port: 8081, Tags: []string{"canary"}})
	if err := os.MkdirAll(filepath.Join(dir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "local", "in.tpl"), []byte(`task=[[ env "NOMAD_TASK_NAME" ]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	m := start(t, src, rec, false, dir,
		events.Template{DestPath: "local/app.conf", Perms: "0600", EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}user={{ .user }} password={{ .password }}{{ end }}
{{ range nomadService "api" }}server {{ .Address }}:{{ .Port }} {{ .ID }}
{{ end }}{{ range nomadService "prod.api" }}prod={{ .Address }}{{ end }}
{{ range nomadVarList "nomad/jobs/web" }}{{ .Path }};{{ end }}
exists={{ nomadVarExists "nomad/jobs/web" }} missing={{ nomadVarExists "nomad/jobs/nope" }}
{{ range nomadServices }}{{ .Name }}={{ join "," .Tags }}{{ end }}
{{ range nomadService "api" }}{{ if .Tags | contains "canary" }}{{ .ID }} {{ end }}{{ end }}{{ toUpper "up" }} {{ sprig_trunc 3 "sprigged" }}`},
		events.Template{SourcePath: "local/in.tpl", DestPath: "${NOMAD_TASK_DIR}/out.txt", LeftDelim: "[[", RightDelim: "]]"})
	ready(t, m)
	want := `user=app password=hunter2
server 10.0.0.1:8080 s1
server 10.0.0.2:8081 s2
prod=10.0.0.1
nomad/jobs/web;nomad/jobs/web/extra;
exists=true missing=false
api=prod,canary
s2 UP spr`
	if got := read(t, filepath.Join(dir, "local/app.conf")); got != want {
		t.Errorf("app.conf:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "local/app.conf")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("perms: %v %v", fi.Mode(), err)
	}
	if got := read(t, filepath.Join(dir, "local/out.txt")); got != "task=web" {
		t.Errorf("out.txt = %q", got)
	}
	for _, tok := range src.Tokens() {
		if tok != "jwt-1" {
			t.Fatalf("a read presented token %q", tok)
		}
	}
}

// A missing variable blocks the first render with a Missing event; once
// it exists the templates render.
func TestMissingVariableWaits(t *testing.T) {
	dir := t.TempDir()
	src := templatetest.New()
	rec := newRecorder()
	m := start(t, src, rec, false, dir, events.Template{DestPath: "local/db", EmbeddedTmpl: `{{ (nomadVar "app/db").url }}`})
	ev := wait(t, rec.evCh, "the Missing event")
	if ev.Type != template.EventType || ev.Message != "Missing: nomad.var.block(app/db@default.global)" {
		t.Fatalf("event %+v", ev)
	}
	select {
	case <-m.Ready():
		t.Fatal("rendered without the variable")
	default:
	}
	src.PutVar("default", "app/db", map[string]string{"url": "pg://db"})
	ready(t, m)
	if got := read(t, filepath.Join(dir, "local/db")); got != "pg://db" {
		t.Fatalf("db = %q", got)
	}
}

// A server that cannot be read makes the template wait with the error.
func TestReadErrorWaits(t *testing.T) {
	dir := t.TempDir()
	src := templatetest.New()
	src.Fail(errors.New("connection refused"))
	rec := newRecorder()
	m := start(t, src, rec, false, dir, events.Template{DestPath: "x", EmbeddedTmpl: `{{ range nomadService "api" }}{{ end }}ok`})
	ev := wait(t, rec.evCh, "the error event")
	if !strings.Contains(ev.Message, "nomad.service(api@default.global): connection refused") {
		t.Fatalf("event %+v", ev)
	}
	select {
	case <-m.Ready():
		t.Fatal("rendered")
	default:
	}
}

// A template that cannot parse fails.
func TestParseErrorFails(t *testing.T) {
	rec := newRecorder()
	m := start(t, templatetest.New(), rec, false, t.TempDir(), events.Template{DestPath: "x", EmbeddedTmpl: `{{ if }}`})
	err := wait(t, m.Failed(), "the failure")
	if !strings.Contains(err.Error(), "parse") {
		t.Fatalf("err %v", err)
	}
	if ev := wait(t, rec.evCh, "the event"); !strings.HasPrefix(ev.Message, "Template failed: template 0") {
		t.Fatalf("event %+v", ev)
	}
	if _, err := template.New(template.Config{TaskDir: "/x", Templates: []events.Template{{DestPath: "x", EmbeddedTmpl: "a", ChangeMode: "signal"}}}); err == nil {
		t.Fatal("signal mode without a signal accepted")
	}
}

// Changes: a variable change restarts (change_mode restart), a service
// change signals, after the splay; an unchanged output asks nothing.
func TestReRenderChangeModes(t *testing.T) {
	dir := t.TempDir()
	src := templatetest.New()
	src.PutVar("default", "app", map[string]string{"v": "1"})
	rec := newRecorder()
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	m := startClock(t, src, rec, false, dir, clk,
		events.Template{DestPath: "a", EmbeddedTmpl: `{{ (nomadVar "app").v }}`, ChangeMode: events.TemplateChangeRestart},
		events.Template{DestPath: "b", EmbeddedTmpl: `{{ range nomadService "api" }}{{ .Port }}{{ end }}`,
			ChangeMode: events.TemplateChangeSignal, ChangeSignal: "SIGHUP", Splay: time.Minute},
		events.Template{DestPath: "c", EmbeddedTmpl: `{{ (nomadVar "app").other }}`, ChangeMode: events.TemplateChangeNoop})
	ready(t, m)

	src.PutVar("default", "app", map[string]string{"v": "2"})
	if c := wait(t, rec.changes, "the restart"); !c.Restart || len(c.Signals) != 0 {
		t.Fatalf("change %+v", c)
	}
	if got := read(t, filepath.Join(dir, "a")); got != "2" {
		t.Fatalf("a = %q", got)
	}

	src.SetService("default", "api", events.ServiceRegistration{ID: "s1", Port: 9000})
	clk.BlockUntilWaiters(1) // the splay
	select {
	case c := <-rec.changes:
		t.Fatalf("change before the splay: %+v", c)
	default:
	}
	clk.Advance(time.Minute)
	if c := wait(t, rec.changes, "the signal"); c.Restart || len(c.Signals) != 1 || c.Signals[0] != "SIGHUP" {
		t.Fatalf("change %+v", c)
	}
	if got := read(t, filepath.Join(dir, "b")); got != "9000" {
		t.Fatalf("b = %q", got)
	}

	// A noop template's change asks nothing.
	src.PutVar("default", "app", map[string]string{"v": "2", "other": "x"})
	src.PutVar("default", "unrelated", map[string]string{"x": "y"})
	src.SetService("default", "api", events.ServiceRegistration{ID: "s1", Port: 9000})
	for read(t, filepath.Join(dir, "c")) != "x" {
		select {
		case c := <-rec.changes:
			t.Fatalf("change %+v", c)
		case <-time.After(time.Millisecond): // polls the file the manager writes
		}
	}
}

// env = true templates feed the task's environment; a change restarts.
func TestEnvTemplate(t *testing.T) {
	dir := t.TempDir()
	src := templatetest.New()
	src.PutVar("default", "app", map[string]string{"port": "8080"})
	rec := newRecorder()
	m := start(t, src, rec, false, dir, events.Template{DestPath: "secrets/app.env", Envvars: true, ChangeMode: events.TemplateChangeNoop,
		EmbeddedTmpl: "# settings\nPORT={{ (nomadVar \"app\").port }}\nexport NAME=\"web app\"\n\nBAD LINE\n"})
	ready(t, m)
	if env := m.Env(); env["PORT"] != "8080" || env["NAME"] != "web app" || len(env) != 2 {
		t.Fatalf("env %v", env)
	}
	src.PutVar("default", "app", map[string]string{"port": "9090"})
	if c := wait(t, rec.changes, "the restart"); !c.Restart {
		t.Fatalf("change %+v", c)
	}
	if env := m.Env(); env["PORT"] != "9090" {
		t.Fatalf("env %v", env)
	}
}

// A re-attached task's templates act only on what differs from the files
// on disk.
func TestRunningComparesWithDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "same"), []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	m := start(t, templatetest.New(), rec, true, dir,
		events.Template{DestPath: "same", EmbeddedTmpl: "one"})
	ready(t, m)
	select {
	case c := <-rec.changes:
		t.Fatalf("unchanged file changed: %+v", c)
	default:
	}
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "f"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec2 := newRecorder()
	start(t, templatetest.New(), rec2, true, dir2, events.Template{DestPath: "f", EmbeddedTmpl: "new", ChangeMode: "signal", ChangeSignal: "SIGUSR1"})
	if c := wait(t, rec2.changes, "the change"); len(c.Signals) != 1 {
		t.Fatalf("change %+v", c)
	}
}

// Destinations stay in the task directory.
func TestInDir(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"local/x", "/t/local/x"}, {"/etc/x", "/t/etc/x"}, {"../../x", "/t/x"}, {"/t/secrets/x", "/t/secrets/x"}, {"/tx", "/t/tx"},
	} {
		if got := template.InDir("/t", c.in); got != c.want {
			t.Errorf("InDir(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
