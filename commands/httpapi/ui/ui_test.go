package ui

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerServesFilesAndThePageForEveryRoute(t *testing.T) {
	h := Handler()
	for _, c := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/ui/", 200, `<script type="module" src="/ui/app.js">`},
		{"GET", "/ui/jobs/web@default/allocations", 200, `<div id="app">`},
		{"GET", "/ui/jobs?at_index=12", 200, `<div id="app">`},
		{"GET", "/ui/app.js", 200, "render("},
		{"GET", "/ui/vendor/preact.mjs", 200, "export"},
		{"GET", "/ui/missing.js", 404, ""},
		{"GET", "/ui/../go.mod", 404, ""}, // never a file outside static
		{"POST", "/ui/jobs", 405, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("%s %s: %d %.80q, want %d containing %q", c.method, c.path, rec.Code, rec.Body.String(), c.status, c.contains)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/jobs", nil))
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("the page's CSP is %q: the UI loads nothing from elsewhere", csp)
	}
	if rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
}
