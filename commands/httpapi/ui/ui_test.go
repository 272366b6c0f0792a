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

// A file and the page carry an ETag of their content; a browser that
// sends it back gets 304 Not Modified and no body, and a stale tag gets
// the file again.
func TestHandlerRevalidatesByContent(t *testing.T) {
	h := Handler()
	for _, p := range []string{"/ui/app.js", "/ui/jobs/web@default"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		tag := rec.Header().Get("ETag")
		if rec.Code != 200 || len(tag) < 10 || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET %s: %d, ETag %q, Cache-Control %q", p, rec.Code, tag, rec.Header().Get("Cache-Control"))
		}
		req := httptest.NewRequest("GET", p, nil)
		req.Header.Set("If-None-Match", tag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 304 || rec.Body.Len() != 0 {
			t.Errorf("GET %s with its ETag: %d and %d bytes, want 304 and none", p, rec.Code, rec.Body.Len())
		}
		req.Header.Set("If-None-Match", `"stale"`)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("GET %s with a stale ETag: %d and %d bytes, want 200 and the file", p, rec.Code, rec.Body.Len())
		}
	}
	a, b := httptest.NewRecorder(), httptest.NewRecorder()
	h.ServeHTTP(a, httptest.NewRequest("GET", "/ui/app.js", nil))
	h.ServeHTTP(b, httptest.NewRequest("GET", "/ui/vendor/preact.mjs", nil))
	if a.Header().Get("ETag") == b.Header().Get("ETag") {
		t.Errorf("two files share the ETag %s", a.Header().Get("ETag"))
	}
}
