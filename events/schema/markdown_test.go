package schema_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

var update = flag.Bool("update", false, "rewrite docs/events.md from the registry")

var docsPath = filepath.Join("..", "..", "docs", "events.md")

// TestDocsUpToDate fails when docs/events.md differs from what the registry
// generates; -update rewrites it.
func TestDocsUpToDate(t *testing.T) {
	want, err := schema.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(docsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/events.md is out of date with the event registry; regenerate it with\n\tgo test ./events/schema -run TestDocsUpToDate -update")
	}
}

// TestDocsListEveryType: the page has a section, with its schema, for
// every registered type.
func TestDocsListEveryType(t *testing.T) {
	md, err := schema.Markdown()
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	for _, typ := range events.Types() {
		if !strings.Contains(text, "\n### "+typ.Name+"\n") || !strings.Contains(text, `"x-ordo-type": "`+typ.Name+`"`) {
			t.Errorf("docs lack %s", typ.Name)
		}
	}
}
