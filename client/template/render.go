package template

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gotemplate "text/template"

	"github.com/ordoplane/ordo/events"
)

// tmpl is one template block and what it last wrote.
type tmpl struct {
	idx    int
	t      events.Template
	dest   string // absolute, inside the task dir
	src    string // absolute, inside the task dir; "" for embedded data
	mode   fs.FileMode
	signal string
	parsed *gotemplate.Template
	// last is the file's content as last written (or found on disk).
	last   []byte
	lastOK bool
}

func (t *tmpl) name() string {
	return fmt.Sprintf("template %d (destination %q)", t.idx, t.t.DestPath)
}

// InDir returns where path (relative to dir, or absolute) lands inside
// dir: a relative path is joined to dir; an absolute one already inside
// dir is kept; any other absolute path is mapped under dir, as a chroot
// at dir would see it. ".." never leaves dir.
func InDir(dir, path string) string {
	if filepath.IsAbs(path) {
		if rel, err := filepath.Rel(dir, filepath.Clean(path)); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.Join(dir, rel)
		}
	}
	return filepath.Join(dir, filepath.Clean("/"+path))
}

func (m *Manager) newTmpl(i int, t events.Template) (*tmpl, error) {
	tp := &tmpl{idx: i, t: t, mode: 0o644}
	if t.DestPath == "" {
		return nil, fmt.Errorf("template %d: destination is required", i)
	}
	if t.EmbeddedTmpl == "" && t.SourcePath == "" {
		return nil, fmt.Errorf("template %d: data or source is required", i)
	}
	tp.dest = InDir(m.cfg.TaskDir, m.cfg.Replace(t.DestPath))
	if t.EmbeddedTmpl == "" {
		tp.src = InDir(m.cfg.TaskDir, m.cfg.Replace(t.SourcePath))
	}
	if t.Perms != "" {
		n, err := strconv.ParseUint(t.Perms, 8, 32)
		if err != nil || n > 0o7777 {
			return nil, fmt.Errorf("template %d: perms %q is not an octal file mode", i, t.Perms)
		}
		tp.mode = fs.FileMode(n)
	}
	switch t.ChangeMode {
	case "", events.TemplateChangeRestart, events.TemplateChangeNoop:
	case events.TemplateChangeSignal:
		tp.signal = m.cfg.Replace(t.ChangeSignal)
		if tp.signal == "" {
			return nil, fmt.Errorf("template %d: change_signal is required with change_mode signal", i)
		}
	case events.TemplateChangeScript:
		if t.ChangeScript == nil || t.ChangeScript.Command == "" {
			return nil, fmt.Errorf("template %d: change_script is required with change_mode script", i)
		}
	default:
		return nil, fmt.Errorf("template %d: unknown change_mode %q", i, t.ChangeMode)
	}
	if b, err := os.ReadFile(tp.dest); err == nil {
		tp.last, tp.lastOK = b, true
	}
	return tp, nil
}

// parse parses the template's text on its first render.
func (m *Manager) parse(t *tmpl) error {
	if t.parsed != nil {
		return nil
	}
	text := t.t.EmbeddedTmpl
	if t.src != "" {
		b, err := os.ReadFile(t.src)
		if err != nil {
			return fmt.Errorf("read source: %w", err)
		}
		text = string(b)
	}
	p := gotemplate.New(filepath.Base(t.dest)).Funcs(m.funcs()).Delims(t.t.LeftDelim, t.t.RightDelim)
	if t.t.ErrMissingKey {
		p = p.Option("missingkey=error")
	}
	p, err := p.Parse(text)
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	t.parsed = p
	return nil
}

// render executes t: its output, or the reasons it waits (missing non-nil,
// "" for data still being fetched), or the error it cannot render with.
func (m *Manager) render(ctx context.Context, t *tmpl) (out []byte, missing []string, err error) {
	if err := m.parse(t); err != nil {
		return nil, nil, err
	}
	m.cur = &pass{ctx: ctx}
	defer func() { m.cur = nil }()
	var buf bytes.Buffer
	err = t.parsed.Execute(&buf, nil)
	if m.cur.missing != nil {
		return nil, m.cur.missing, nil
	}
	if err != nil {
		var ee gotemplate.ExecError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return nil, nil, fmt.Errorf("execute: %w", err)
	}
	return buf.Bytes(), nil, nil
}

// write writes out to the destination when it differs from the content
// last written; true when it did.
func (t *tmpl) write(out []byte) (bool, error) {
	if t.lastOK && bytes.Equal(out, t.last) {
		if fi, err := os.Stat(t.dest); err == nil && fi.Mode().Perm() == t.mode.Perm() {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(t.dest), 0o755); err != nil {
		return false, fmt.Errorf("destination: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.dest), "."+filepath.Base(t.dest)+".tmp*")
	if err != nil {
		return false, fmt.Errorf("destination: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write destination: %w", err)
	}
	if err := tmp.Chmod(t.mode); err != nil {
		tmp.Close()
		return false, fmt.Errorf("destination perms: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write destination: %w", err)
	}
	if err := os.Rename(tmp.Name(), t.dest); err != nil {
		return false, fmt.Errorf("write destination: %w", err)
	}
	changed := !t.lastOK || !bytes.Equal(out, t.last)
	t.last, t.lastOK = bytes.Clone(out), true
	return changed, nil
}

// parseEnv reads KEY=value lines, as Nomad's env templates: blank lines
// and # comments are skipped, an "export " prefix is dropped, and a value
// in matching single or double quotes loses them.
func parseEnv(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		v = strings.TrimSpace(v)
		if n := len(v); n >= 2 && (v[0] == '"' && v[n-1] == '"' || v[0] == '\'' && v[n-1] == '\'') {
			v = v[1 : n-1]
		}
		out[k] = v
	}
	return out
}
