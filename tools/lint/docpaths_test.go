package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is a markdown code span: `…`.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// TestDocPathsExist fails when the README's map of the tree or
// docs/behaviours.md names a path in the repository (`storage/slab`,
// `processors/scheduler/csi.go`) that does not exist, so that a package
// moved or removed takes its mention along.
func TestDocPathsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, doc := range []string{"README.md", filepath.Join("docs", "behaviours.md")} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range codeSpan.FindAllStringSubmatch(string(b), -1) {
			p := strings.TrimSuffix(m[1], "/")
			if !repoPath(p) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				t.Errorf("%s names %s, which is not in the tree: update the mention", doc, p)
			}
		}
	}
}

// repoPath reports whether s reads as a path under one of the top-level
// directories of layers: lower-case segments joined by slashes, the last
// one possibly a file name.
func repoPath(s string) bool {
	if strings.ContainsAny(s, " *$<>{}()|:") {
		return false
	}
	first, _, _ := strings.Cut(s, "/")
	if _, ok := layers[first]; !ok {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || strings.ToLower(seg) != seg {
			return false
		}
	}
	return true
}
