package docker

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLogFileRotation: a write that would pass maxBytes moves the file to
// path.1 (older ones up, the oldest dropped) and starts a new one; with
// one file kept the file is truncated instead.
func TestLogFileRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "web.stdout")
	l, err := openLogFile(path, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"aaaa\n", "bbbb\n", "cccc\n", "dddd\n", "eeee\n", "ffff\n", "gg\n"} {
		if _, err := l.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for p, want := range map[string]string{path: "gg\n", path + ".1": "eeee\nffff\n", path + ".2": "cccc\ndddd\n"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s = %q, want %q", filepath.Base(p), b, want)
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("a fourth file kept with maxFiles 3")
	}

	one := filepath.Join(t.TempDir(), "one.stdout")
	l, err = openLogFile(one, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"aaaa\n", "bbbb\n", "cc\n"} {
		l.Write([]byte(w))
	}
	l.Close()
	if b, _ := os.ReadFile(one); string(b) != "cc\n" {
		t.Errorf("with one file kept: %q", b)
	}
}
