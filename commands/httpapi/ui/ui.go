// Package ui holds the web UI the agent serves under /ui/: static files
// embedded in the binary (static/), which read only the public HTTP API.
//
// The UI is plain ES modules run by the browser as they are written: no
// build step. Preact, htm and uPlot are vendored under static/vendor
// (their licences in LICENSES.txt); docs/ui.md says how to change a page.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// Prefix is the path the UI is served under.
const Prefix = "/ui/"

// Handler serves the UI: a file of static/ when the path names one, and
// index.html for every other path under Prefix, so that a page's URL
// (/ui/jobs/web@default) loads the app, which routes it in the browser.
// Every answer carries an ETag of the file's content and must be
// revalidated (no-cache): a browser asks again on each load and gets 304
// Not Modified until the binary serves other files.
func Handler() http.Handler {
	root, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // static is embedded at build time
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic(err)
	}
	etags, err := contentTags(root)
	if err != nil {
		panic(err)
	}
	fileServer := http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the UI's files are read with GET", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(Prefix, "/"))
		name = strings.TrimPrefix(name, "/")
		if name != "" && name != "index.html" {
			if st, err := fs.Stat(root, name); err == nil && !st.IsDir() {
				// Modules change with the binary: revalidate, never serve stale.
				w.Header().Set("Cache-Control", "no-cache")
				w.Header().Set("ETag", etags[name])
				fileServer.ServeHTTP(w, r)
				return
			}
			if path.Ext(name) != "" {
				http.NotFound(w, r) // a missing asset, not a page
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("ETag", etags["index.html"])
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
	})
}

// contentTags returns each file's ETag under root, by path: a strong tag
// of the first 16 bytes of its SHA-256.
func contentTags(root fs.FS) (map[string]string, error) {
	tags := map[string]string{}
	err := fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		tags[name] = `"` + hex.EncodeToString(sum[:16]) + `"`
		return nil
	})
	return tags, err
}
