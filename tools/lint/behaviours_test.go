package lint

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"strings"
	"testing"
)

// behaviourTag is how code and docs name a behaviour of docs/behaviours.md:
// N1–N24 (Nomad's lessons) and P1–P29 (Nodepool's).
var behaviourTag = regexp.MustCompile(`\b[NP][0-9]{1,2}\b`)

// behaviourEntry is an entry's heading in docs/behaviours.md.
var behaviourEntry = regexp.MustCompile(`(?m)^### ([NP][0-9]{1,2})$`)

// TestBehaviourTagsExplained fails when a tag used in a Go file or in
// docs/*.md has no entry in docs/behaviours.md, so that a reader can look
// up every tag inside the repository.
func TestBehaviourTagsExplained(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "behaviours.md"))
	if err != nil {
		t.Fatal(err)
	}
	explained := map[string]bool{}
	for _, m := range behaviourEntry.FindAllStringSubmatch(string(page), -1) {
		explained[m[1]] = true
	}
	if len(explained) == 0 {
		t.Fatal("docs/behaviours.md has no entry (### N1, ### P1, …)")
	}
	missing := map[string][]string{} // tag → files using it
	check := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, tag := range behaviourTag.FindAllString(string(b), -1) {
			if !explained[tag] {
				r, _ := filepath.Rel(root, path)
				missing[tag] = append(missing[tag], r)
			}
		}
		return nil
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			return check(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := check(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, tag := range slices.Sorted(maps.Keys(missing)) {
		files := missing[tag]
		slices.Sort(files)
		t.Errorf("%s is used in %s but has no entry in docs/behaviours.md: add a \"### %s\" entry saying what it is and where it lives", tag, strings.Join(slices.Compact(files), ", "), tag)
	}
}
