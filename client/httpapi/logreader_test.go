package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// rotateLog does what the exec driver's rotation does (copy-truncate):
// drop the oldest kept file, move the others up one number, copy the
// current file to .1 and truncate it. mtime stamps the copy, standing in
// for the seconds between two rotations.
func rotateLog(t *testing.T, path string, maxFiles int, mtime time.Time) {
	t.Helper()
	if maxFiles > 1 {
		if err := os.Remove(driver.RotatedPath(path, maxFiles-1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		for n := maxFiles - 2; n >= 1; n-- {
			if err := os.Rename(driver.RotatedPath(path, n), driver.RotatedPath(path, n+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, driver.RotatedPath(path, 1), string(b))
		if err := os.Chtimes(driver.RotatedPath(path, 1), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// drain reads r until it has nothing more for now.
func drain(t *testing.T, r *logReader, out *bytes.Buffer, wait bool) {
	t.Helper()
	buf := make([]byte, 251) // small, so chunks end anywhere
	for {
		c, err := r.read(buf, wait)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.data) == 0 {
			return
		}
		out.Write(c.data)
	}
}

// Property: a reader that reads between rotations, no more rotations in
// between than rotated files are kept, reads every byte written exactly
// once and in order, whatever the appends, rotations and reads.
func TestLogReaderFollowsRotations(t *testing.T) {
	for seed := range uint64(48) {
		rng := rand.New(rand.NewPCG(seed, 1))
		maxFiles := 1 + rng.IntN(4)
		path := filepath.Join(t.TempDir(), "web.stdout")
		start := rng.IntN(3) // 0: nothing yet; 1: the current file only; 2: rotated files too
		var written, got bytes.Buffer
		write := func() {
			b := make([]byte, 1+rng.IntN(300))
			for i := range b {
				b[i] = byte('a' + rng.IntN(26))
			}
			appendFile(t, path, b)
			written.Write(b)
		}
		mtime := time.Unix(1_700_000_000, 0)
		rotate := func() {
			mtime = mtime.Add(time.Second)
			rotateLog(t, path, maxFiles, mtime)
		}
		if start >= 1 {
			write()
		}
		if start == 2 && maxFiles > 1 {
			rotate()
			write()
		}
		r, at, err := newLogReader(path, 0, false)
		if err != nil || at != 0 {
			t.Fatalf("seed %d: newLogReader at %d: %v", seed, at, err)
		}
		pending := 0 // rotations since the last read, or since the oldest file was made
		if start == 2 && maxFiles > 1 {
			pending = 1
		}
		for range 60 {
			switch op := rng.IntN(9); {
			case op < 6:
				write()
			case op < 7 && written.Len() > 0: // the driver rotates files that exist
				if pending >= maxFiles-1 {
					drain(t, r, &got, false)
					pending = 0
				}
				rotate()
				pending++
				if maxFiles == 1 {
					// Truncated in place: read before the task writes
					// more than was read (then it is told by size).
					drain(t, r, &got, false)
					pending = 0
				}
			default:
				drain(t, r, &got, false)
				pending = 0
			}
		}
		drain(t, r, &got, false)
		if !bytes.Equal(got.Bytes(), written.Bytes()) {
			t.Fatalf("seed %d (max files %d): read %d bytes, wrote %d:\nread  %q\nwrote %q", seed, maxFiles, got.Len(), written.Len(), got.String(), written.String())
		}
	}
}

// A reader at the end of the newest rotated file waits, when told to,
// while the driver is still copying to it (the current file is not
// truncated yet), then reads the rest of the copy and the current file.
func TestLogReaderWaitsForACopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.stdout")
	writeFile(t, driver.RotatedPath(path, 2), "old\n")
	writeFile(t, driver.RotatedPath(path, 1), "copied so") // the copy has begun
	writeFile(t, path, "copied so far\n")                  // not truncated yet
	r, _, err := newLogReader(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	drain(t, r, &got, true)
	if got.String() != "old\ncopied so" {
		t.Fatalf("read %q while the copy runs", got.String())
	}
	appendFile(t, driver.RotatedPath(path, 1), []byte(" far\n"))
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, []byte("new\n"))
	drain(t, r, &got, true)
	if got.String() != "old\ncopied so far\nnew\n" {
		t.Fatalf("read %q", got.String())
	}
}

// A reader held at the end of the newest rotated file goes on at the
// next read when the file did not grow: no copy is running, the current
// file only outgrew it.
func TestLogReaderHoldsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.stdout")
	writeFile(t, driver.RotatedPath(path, 1), "rotated\n")
	writeFile(t, path, "a current file longer than the rotated one\n")
	r, _, err := newLogReader(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	drain(t, r, &got, true)
	if got.String() != "rotated\n" {
		t.Fatalf("first read %q", got.String())
	}
	drain(t, r, &got, true)
	if got.String() != "rotated\na current file longer than the rotated one\n" {
		t.Fatalf("second read %q", got.String())
	}
}

// Offsets count over every file of the stream, from its start or its end.
func TestNewLogReaderOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.stdout")
	writeFile(t, driver.RotatedPath(path, 2), "0123")
	writeFile(t, driver.RotatedPath(path, 1), "4567")
	writeFile(t, path, "89")
	for _, tc := range []struct {
		offset  int64
		fromEnd bool
		at      int64
		want    string
	}{
		{0, false, 0, "0123456789"},
		{3, false, 3, "3456789"},
		{4, false, 4, "456789"},
		{8, false, 8, "89"},
		{9, false, 9, "9"},
		{10, false, 10, ""},
		{99, false, 10, ""},
		{0, true, 10, ""},
		{1, true, 9, "9"},
		{3, true, 7, "789"},
		{6, true, 4, "456789"},
		{10, true, 0, "0123456789"},
		{99, true, 0, "0123456789"},
	} {
		t.Run(fmt.Sprintf("%d-%v", tc.offset, tc.fromEnd), func(t *testing.T) {
			r, at, err := newLogReader(path, tc.offset, tc.fromEnd)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			drain(t, r, &got, false)
			if at != tc.at || got.String() != tc.want {
				t.Fatalf("at %d reading %q, want at %d reading %q", at, got.String(), tc.at, tc.want)
			}
		})
	}
}

// A stream with no file yet reads nothing, then what the task writes.
func TestLogReaderBeforeTheTaskWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "web.stderr")
	r, at, err := newLogReader(path, 5, true)
	if err != nil || at != 0 {
		t.Fatal(at, err)
	}
	var got bytes.Buffer
	drain(t, r, &got, true)
	if got.Len() != 0 {
		t.Fatalf("read %q", got.String())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, []byte("boom\n"))
	drain(t, r, &got, true)
	if got.String() != "boom\n" {
		t.Fatalf("read %q", got.String())
	}
}
