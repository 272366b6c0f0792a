package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	napi "github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/browser"
	"github.com/ordoplane/ordo/test/testagent"
)

// session is a dev agent with a client (exec driver, real processes) and a
// Chromium tab on its UI.
type session struct {
	t    *testing.T
	a    *agent.Agent
	api  *napi.Client
	addr string
	node string
	tab  context.Context

	mu     sync.Mutex
	thrown []string // uncaught exceptions in the page
}

// shared is the package's one Chromium: each test has a tab of its own
// (a Chromium costs more to start than a tab).
var shared struct {
	once sync.Once
	b    *browser.Browser
	err  error
}

// TestMain closes the shared Chromium once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		shared.b.Close()
	}
	os.Exit(code)
}

// start starts the agent and a tab; edit changes the agent's config.
// Each test has its own of both, so the tests run in parallel: most of
// their time is waiting on the agent and the page.
func start(t *testing.T, edit ...func(*agent.Config)) *session {
	t.Helper()
	t.Parallel()
	a, c, node := testagent.StartDevClient(t, edit...)
	return attach(t, a, c, node)
}

// attach opens a Chromium tab on agent a's UI (c a client of it, node its
// client's node, if any): for agents start cannot start (ACLs on).
func attach(t *testing.T, a *agent.Agent, c *napi.Client, node string) *session {
	t.Helper()
	shared.once.Do(func() { shared.b, shared.err = browser.Start(context.Background(), 1400, 900) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	tab, closeTab := shared.b.NewTab()
	t.Cleanup(closeTab)
	s := &session{t: t, a: a, api: c, addr: a.HTTPAddr(), node: node, tab: tab}
	console := chromedp.Console(s.tab)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleException {
				s.mu.Lock()
				s.thrown = append(s.thrown, fmt.Sprintf("%s (%s:%d)", m.Text, m.URL, m.Line))
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.thrown) > 0 {
			t.Errorf("the page threw: %s", strings.Join(s.thrown, "\n"))
		}
	})
	return s
}

// run runs chromedp actions on the tab, failing the test on error.
func (s *session) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, testagent.ServerTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
}

// open loads the UI's page at path (under /ui) and waits for the app.
func (s *session) open(path string) {
	s.t.Helper()
	s.run("open "+path, chromedp.Navigate("http://"+s.addr+"/ui"+path), chromedp.WaitVisible(chromedp.CSS("main#main")))
}

// eval evaluates a JavaScript expression in the page (awaiting it when
// it is a promise) into out.
func (s *session) eval(expr string, out any) error {
	ctx, cancel := context.WithTimeout(s.tab, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(v, out)
}

// textOf is the text of every element sel matches, joined by newlines.
func (s *session) textOf(sel string) string {
	var out string
	expr := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.innerText).join("\n")`, sel)
	if err := s.eval(expr, &out); err != nil {
		return ""
	}
	return out
}

// waitText waits until an element sel matches holds text.
func (s *session) waitText(sel, text string) {
	s.t.Helper()
	testagent.WaitFor(s.t, testagent.ServerTimeout, fmt.Sprintf("%q in %s", text, sel), func() bool {
		return strings.Contains(s.textOf(sel), text)
	})
}

// waitNoText waits until no element sel matches holds text.
func (s *session) waitNoText(sel, text string) {
	s.t.Helper()
	testagent.WaitFor(s.t, testagent.ServerTimeout, fmt.Sprintf("no %q in %s", text, sel), func() bool {
		return !strings.Contains(s.textOf(sel), text)
	})
}

// click clicks the first element sel matches whose text contains text
// ("" for any), once it is there. A confirmation the click asks for
// (window.confirm) is answered yes: a native dialog would block the page.
func (s *session) click(sel, text string) {
	s.t.Helper()
	expr := fmt.Sprintf(`(() => { window.confirm = () => true; const e = [...document.querySelectorAll(%q)].find(e => e.innerText.includes(%q) || (e.getAttribute('aria-label')||'').includes(%q)); if (!e || e.disabled) return false; e.click(); return true })()`, sel, text, text)
	testagent.WaitFor(s.t, testagent.ServerTimeout, fmt.Sprintf("click %s %q", sel, text), func() bool {
		var ok bool
		return s.eval(expr, &ok) == nil && ok
	})
}

// fill sets the input sel names to value, replacing what it held, and
// fires its input and change events as typing does. (chromedp's SetValue
// reports a failure for an empty value, so it is not cleared first.)
func (s *session) fill(sel, value string) {
	s.t.Helper()
	s.run("fill "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SetValue(chromedp.CSS(sel), value))
}

// press sends a key (kb.Enter, kb.Tab…) to the focused element.
func (s *session) press(key string) {
	s.t.Helper()
	s.run("press", chromedp.KeyEvent(key))
}

// url is the page's location, path and query, without the host.
func (s *session) url() string {
	var out string
	_ = s.eval(`location.pathname + location.search`, &out)
	return out
}

// shot saves a screenshot of the page as <name>.png in the directory
// $ORDO_UI_SCREENSHOTS names: test artifacts for a reviewer to look at,
// never committed. Without it (make test) it takes none: a full-page
// capture costs Chromium about a quarter of a CPU-second, and the
// package's 26 of them were an eighth of its CPU, for no check.
func (s *session) shot(name string) {
	s.t.Helper()
	dir := os.Getenv("ORDO_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(s.tab, testagent.ServerTimeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// unlabelled lists the page's controls a screen reader cannot name: every
// button, link, input and select needs text, a label, aria-label or
// title.
const unlabelled = `(() => {
  const name = (e) => (e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.title ||
    (e.labels && [...e.labels].map(l => l.innerText).join('')) || (e.tagName === 'INPUT' ? '' : e.innerText) || '').trim();
  return [...document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea')]
    .filter(e => !name(e)).map(e => e.outerHTML.slice(0, 120));
})()`

// checkA11y fails the test when a control has no accessible name, or
// when Tab does not move the focus through the page's controls in turn.
func (s *session) checkA11y(page string) {
	s.t.Helper()
	var bad []string
	if err := s.eval(unlabelled, &bad); err != nil {
		s.t.Fatal(err)
	}
	if len(bad) > 0 {
		s.t.Errorf("%s: controls without a label:\n%s", page, strings.Join(bad, "\n"))
	}
	// Keyboard: from the top, Tab moves the focus through the page's
	// controls (a date input takes a Tab per field, hence the extra
	// presses), never dropping it on the page itself.
	var n int
	if err := s.eval(`document.querySelectorAll('button:not([disabled]), a[href], input, select').length`, &n); err != nil {
		s.t.Fatal(err)
	}
	// blur() alone leaves Chromium's sequential focus starting point on
	// the control last focused (a second check on one page would start
	// mid-page): focusing the body moves it to the top.
	if err := s.eval(`document.activeElement && document.activeElement.blur(), document.body.tabIndex = -1, document.body.focus(), document.body.removeAttribute('tabindex'), window.scrollTo(0,0), true`, nil); err != nil {
		s.t.Fatal(err)
	}
	want := min(n, 12)
	seen := map[string]bool{}
	for i := 0; i < 3*want && len(seen) < want; i++ {
		s.press(kb.Tab)
		var focused string
		if err := s.eval(`(() => { const e = document.activeElement; return e && e !== document.body ? e.outerHTML.slice(0, 80) + '#' + [...document.querySelectorAll('*')].indexOf(e) : '' })()`, &focused); err != nil {
			s.t.Fatal(err)
		}
		if focused == "" {
			s.t.Errorf("%s: Tab %d left the focus on the page itself", page, i+1)
			return
		}
		seen[focused] = true
	}
	if len(seen) < want {
		s.t.Errorf("%s: Tab reached %d controls of the first %d", page, len(seen), want)
	}
}

// decode turns a JSON answer's text into out (for values read from the page).
func decode(t *testing.T, text string, out any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatal(err)
	}
}
