package docker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// logSpec says where a task's output goes and how it is rotated.
type logSpec struct {
	// stdout and stderr are the current log files; "" discards the stream.
	stdout, stderr string
	// maxBytes is the size at which a file is rotated; 0 never rotates.
	maxBytes int64
	// maxFiles is the number of files kept per stream, the current one
	// included; at least 1.
	maxFiles int
}

// logFile is one log stream's file, which the driver writes (the
// container's output comes through the daemon, not a descriptor of the
// task), rotating it before a write would take it past maxBytes.
// Rotated files are named as every driver names them (driver.RotatedPath): path.1
// the newest, so `ordo alloc logs` reads both drivers' logs alike.
type logFile struct {
	path     string
	maxBytes int64
	maxFiles int
	f        *os.File
	size     int64
}

// openLogFile opens path for appending, creating it and its directory;
// "" discards what is written.
func openLogFile(path string, maxBytes int64, maxFiles int) (*logFile, error) {
	l := &logFile{path: path, maxBytes: maxBytes, maxFiles: max(maxFiles, 1)}
	if path == "" {
		return l, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past
// maxBytes (a write is never split across files).
func (l *logFile) Write(p []byte) (int, error) {
	if l.f == nil {
		return len(p), nil
	}
	if l.maxBytes > 0 && l.size > 0 && l.size+int64(len(p)) > l.maxBytes {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate renames the current file to path.1, shifting older ones up and
// dropping the one past maxFiles-1, then opens a new current file; with
// maxFiles 1 it only truncates.
func (l *logFile) rotate() error {
	if l.maxFiles <= 1 {
		if err := l.f.Truncate(0); err != nil {
			return fmt.Errorf("rotate %s: %w", l.path, err)
		}
		l.size = 0
		return nil
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotate %s: %w", l.path, err)
	}
	l.f = nil
	if err := os.Remove(driver.RotatedPath(l.path, l.maxFiles-1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotate %s: %w", l.path, err)
	}
	for n := l.maxFiles - 2; n >= 0; n-- {
		if err := os.Rename(driver.RotatedPath(l.path, n), driver.RotatedPath(l.path, n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", l.path, err)
		}
	}
	return l.open()
}

// Close closes the file.
func (l *logFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// sincePath is where a closing driver notes the timestamp of the last
// message it wrote into the log file path: a hidden file beside it.
func sincePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".since")
}

// saveSince notes last, the newest message written into path, for the
// next client process; nothing when no message was written or there is no
// file.
func saveSince(path string, last time.Time) error {
	if path == "" || last.IsZero() {
		return nil
	}
	return os.WriteFile(sincePath(path), []byte(sinceValue(last.Add(time.Nanosecond))), 0o644)
}

// since returns the Engine API's "since" for a follower resuming the
// stream into path: just after the last message a closing driver noted
// (the note is consumed), or else, after a client that did not close
// cleanly, the file's modification time (timestamps are coarse, so a few
// messages of its last milliseconds may be written twice); "" (from the
// start) when there is no file.
func since(path string) string {
	if path == "" {
		return ""
	}
	if b, err := os.ReadFile(sincePath(path)); err == nil {
		os.Remove(sincePath(path))
		return strings.TrimSpace(string(b))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return sinceValue(fi.ModTime())
}

// sinceValue renders t as the Engine API's since: seconds.nanoseconds.
func sinceValue(t time.Time) string {
	return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
}
