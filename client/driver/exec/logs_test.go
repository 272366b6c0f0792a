package exec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordoplane/ordo/client/driver"
)

func TestRotate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxFiles int
		before   []string // contents of path, path.1, path.2, …; "-" for absent
		after    []string
	}{
		{"first rotation", 3, []string{"A"}, []string{"", "A", "-"}},
		{"shifts older files", 3, []string{"A", "B"}, []string{"", "A", "B", "-"}},
		{"drops the oldest", 3, []string{"A", "B", "C"}, []string{"", "A", "B", "-"}},
		{"gap in numbers", 4, []string{"A", "-", "C"}, []string{"", "A", "-", "C", "-"}},
		{"one file only truncates", 1, []string{"A"}, []string{"", "-"}},
		{"two files", 2, []string{"A", "B"}, []string{"", "A", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "web.stdout")
			for n, c := range tc.before {
				if c != "-" {
					writeFile(t, driver.RotatedPath(path, n), c)
				}
			}
			if err := rotate(path, tc.maxFiles); err != nil {
				t.Fatal(err)
			}
			for n, want := range tc.after {
				b, err := os.ReadFile(driver.RotatedPath(path, n))
				got := string(b)
				if errors.Is(err, fs.ErrNotExist) {
					got = "-"
				} else if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s = %q, want %q", driver.RotatedPath(path, n), got, want)
				}
			}
		})
	}
}

func TestRotateIfFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.stdout")
	if rotated, err := rotateIfFull(path, 4, 2); err != nil || rotated {
		t.Fatalf("missing file: rotated %v, %v", rotated, err)
	}
	writeFile(t, path, "abc")
	if rotated, err := rotateIfFull(path, 4, 2); err != nil || rotated {
		t.Fatalf("below the limit: rotated %v, %v", rotated, err)
	}
	writeFile(t, path, "abcd")
	if rotated, err := rotateIfFull(path, 4, 2); err != nil || !rotated {
		t.Fatalf("at the limit: rotated %v, %v", rotated, err)
	}
	if rotated, err := rotateIfFull(path, 0, 2); err != nil || rotated {
		t.Fatalf("no limit: rotated %v, %v", rotated, err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
