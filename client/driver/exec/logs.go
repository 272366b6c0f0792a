package exec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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

// openLog opens the log file path for the task to append to, creating it
// and its directory; "" opens the null device.
func openLog(path string) (*os.File, error) {
	if path == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// rotateIfFull rotates the log file path when it has reached maxBytes.
func rotateIfFull(path string, maxBytes int64, maxFiles int) (bool, error) {
	if path == "" || maxBytes <= 0 {
		return false, nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat log: %w", err)
	}
	if fi.Size() < maxBytes {
		return false, nil
	}
	return true, rotate(path, maxFiles)
}

// rotate copies the log file path to path.1 and truncates it (copy-truncate:
// the task keeps its O_APPEND descriptor, so its next write lands at the
// start of the emptied file). Older rotated files move up one number; the
// one that would become path.<maxFiles> is removed. With maxFiles <= 1 the
// file is only truncated. Output the task writes between the end of the
// copy and the truncation is lost.
func rotate(path string, maxFiles int) error {
	if maxFiles > 1 {
		if err := os.Remove(driver.RotatedPath(path, maxFiles-1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", path, err)
		}
		for n := maxFiles - 2; n >= 1; n-- {
			if err := os.Rename(driver.RotatedPath(path, n), driver.RotatedPath(path, n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rotate %s: %w", path, err)
			}
		}
		if err := copyFile(path, driver.RotatedPath(path, 1)); err != nil {
			return fmt.Errorf("rotate %s: %w", path, err)
		}
	}
	if err := os.Truncate(path, 0); err != nil {
		return fmt.Errorf("rotate %s: %w", path, err)
	}
	return nil
}

// copyFile copies src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
