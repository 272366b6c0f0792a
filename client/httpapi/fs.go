package httpapi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/api"
)

// allocPath is a path inside an allocation's directory, checked.
type allocPath struct {
	root *os.Root
	// rel is the path relative to the directory ("." for itself).
	rel string
}

// openAllocPath checks the path query parameter of r against the
// allocation's directory: 400 naming path for one that climbs out of it
// (".."), 403 for a task's secrets directory (as Nomad refuses to read
// it) or a symbolic link that leads out of the directory. The caller
// closes root.
func (s *Server) openAllocPath(r *http.Request) (allocPath, error) {
	_, c, err := s.controls(r)
	if err != nil {
		return allocPath{}, err
	}
	raw := r.URL.Query().Get("path")
	if raw == "" {
		raw = "/"
	}
	if slices.Contains(strings.Split(filepath.ToSlash(raw), "/"), "..") {
		return allocPath{}, invalid("path", "%q climbs out of the allocation directory", raw)
	}
	rel := strings.TrimPrefix(path.Clean("/"+raw), "/")
	if rel == "" {
		rel = "."
	}
	dir := c.Dir()
	// A link inside the directory may lead to a secrets directory: check
	// where the path resolves to as well as the path.
	resolved := rel
	if real, err := filepath.EvalSymlinks(filepath.Join(dir, rel)); err == nil {
		if realDir, err := filepath.EvalSymlinks(dir); err == nil {
			if rr, err := filepath.Rel(realDir, real); err == nil {
				resolved = filepath.ToSlash(rr)
			}
		}
	}
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return allocPath{}, forbidden("path", "%q leads out of the allocation directory", raw)
	}
	if inSecrets(rel) || inSecrets(resolved) {
		return allocPath{}, forbidden("path", "%q is in a task's secrets directory, which is not readable through the API", raw)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return allocPath{}, fmt.Errorf("open allocation directory: %w", err)
	}
	// os.Root refuses to follow a link out of dir; say so as a 403.
	if _, err := root.Stat(rel); err != nil {
		root.Close()
		return allocPath{}, fsError(raw, err)
	}
	return allocPath{root: root, rel: rel}, nil
}

// inSecrets reports whether rel (relative to the allocation directory)
// is in a task's secrets directory, <task>/secrets.
func inSecrets(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) >= 2 && parts[1] == "secrets" && parts[0] != "alloc"
}

// fsError maps an error of os.Root to its answer: 404 for a missing
// file, 403 for the rest (os.Root refuses a path that leads out of the
// directory, such as a link to a missing file outside it).
func fsError(raw string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &apiError{Status: http.StatusNotFound, Field: "path", Reason: "no such file",
			Message: fmt.Sprintf("%s: no such file or directory", raw)}
	}
	return forbidden("path", "%q cannot be read inside the allocation directory: %v", raw, err)
}

// forbidden is a 403 naming the parameter.
func forbidden(field, format string, args ...any) *apiError {
	reason := fmt.Sprintf(format, args...)
	return &apiError{Status: http.StatusForbidden, Field: field, Reason: reason,
		Message: fmt.Sprintf("forbidden %s: %s", field, reason)}
}

// fileInfo returns Nomad's AllocFileInfo of fi, named name; the content
// type of a file is sniffed from its first bytes.
func fileInfo(root *os.Root, rel, name string, fi fs.FileInfo) api.AllocFileInfo {
	info := api.AllocFileInfo{Name: name, IsDir: fi.IsDir(), Size: fi.Size(), FileMode: fi.Mode().String(), ModTime: fi.ModTime()}
	if fi.Mode().IsRegular() {
		if f, err := root.Open(rel); err == nil {
			buf := make([]byte, 512)
			n, _ := io.ReadFull(f, buf)
			f.Close()
			info.ContentType = http.DetectContentType(buf[:n])
		}
	}
	return info
}

// fsList is GET /v1/client/fs/ls/{alloc_id}?path=: the entries of a
// directory of the allocation, as []api.AllocFileInfo.
func (s *Server) fsList(w http.ResponseWriter, r *http.Request) {
	p, err := s.openAllocPath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer p.root.Close()
	d, err := p.root.Open(p.rel)
	if err != nil {
		writeError(w, fsError(p.rel, err))
		return
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		writeError(w, invalid("path", "%q is not a directory", r.URL.Query().Get("path")))
		return
	}
	out := make([]api.AllocFileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, fileInfo(p.root, path.Join(p.rel, e.Name()), e.Name(), fi))
	}
	s.answer(w, out, nil)
}

// fsStat is GET /v1/client/fs/stat/{alloc_id}?path=: one file's
// api.AllocFileInfo.
func (s *Server) fsStat(w http.ResponseWriter, r *http.Request) {
	p, err := s.openAllocPath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer p.root.Close()
	fi, err := p.root.Stat(p.rel)
	if err != nil {
		writeError(w, fsError(p.rel, err))
		return
	}
	s.answer(w, fileInfo(p.root, p.rel, path.Base(p.rel), fi), nil)
}

// openAllocFile opens the regular file the path parameter names (400
// naming path for a directory); the caller closes the file and p.root.
func (s *Server) openAllocFile(r *http.Request) (allocPath, *os.File, fs.FileInfo, error) {
	p, err := s.openAllocPath(r)
	if err != nil {
		return p, nil, nil, err
	}
	f, err := p.root.Open(p.rel)
	if err != nil {
		p.root.Close()
		return p, nil, nil, fsError(p.rel, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		err = invalid("path", "%q is a directory", r.URL.Query().Get("path"))
	}
	if err != nil {
		f.Close()
		p.root.Close()
		return p, nil, nil, err
	}
	return p, f, fi, nil
}

// fsCat is GET /v1/client/fs/cat/{alloc_id}?path=, and
// /v1/client/fs/readat/{alloc_id}?path=&offset=&limit= (limit <= 0: to
// the end): a file's bytes, raw.
func (s *Server) fsCat(w http.ResponseWriter, r *http.Request) {
	var offset, limit int64
	q := r.URL.Query()
	for _, f := range []struct {
		name string
		v    *int64
	}{{"offset", &offset}, {"limit", &limit}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || (f.name == "offset" && n < 0) {
				writeError(w, invalid(f.name, "%q is not a byte count", v))
				return
			}
			*f.v = n
		}
	}
	p, f, fi, err := s.openAllocFile(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer p.root.Close()
	defer f.Close()
	var rd io.Reader = io.NewSectionReader(f, offset, max(fi.Size()-offset, 0))
	if limit > 0 {
		rd = io.LimitReader(rd, limit)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if _, err := io.Copy(w, rd); err != nil {
		s.log.Debug("write file", "path", p.rel, "err", err)
	}
}
