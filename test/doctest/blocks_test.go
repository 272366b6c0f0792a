package doctest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/test/doctest"
)

// Blocks reads fences, indented or not, and refuses what breaks the
// convention, naming the line.
func TestBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // per block: lang|skip|body joined by ;
		err       string
	}{
		{"kinds", "text\n```sh\nordo a\nordo b\n```\n```sh skip: needs Kafka\nkafka\n```\n```hcl\njob {}\n```\n", []string{"sh||ordo a;ordo b", "sh|needs Kafka|kafka", "hcl||job {}"}, ""},
		{"indented in a list", "- item\n  ```sh\n  ordo a\n  ```\n", []string{"sh||ordo a"}, ""},
		{"no language", "a\n\n```\nordo a\n```\n", nil, "line 3: a fence with no language"},
		{"bash", "```bash\nordo a\n```\n", nil, "line 1: shell block \"bash\""},
		{"skip without reason", "```sh skip:\nordo a\n```\n", nil, "line 1: shell block \"sh skip:\""},
		{"not closed", "```sh\nordo a\n", nil, "line 1: block not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := doctest.Blocks(strings.NewReader(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range blocks {
				got = append(got, b.Lang+"|"+b.Skip+"|"+strings.Join(b.Body, ";"))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("blocks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A script runs its runnable blocks in order, holds "# exit N:" to N and
// maps a failure back to the doc's line.
func TestScript(t *testing.T) {
	doc := strings.Join([]string{
		"# A doc",                    // 1
		"```sh",                      // 2
		"x=1",                        // 3
		"false   # exit 1: it fails", // 4
		"```",                        // 5
		"```sh skip: not run",        // 6
		"exit 9",                     // 7
		"```",                        // 8
		"```sh",                      // 9
		"echo $x > out",              // 10
		"for i in 1; do",             // 11
		"  test $i = 2",              // 12
		"done",                       // 13
		"```",                        // 14
	}, "\n")
	blocks, err := doctest.Blocks(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := doctest.NewScript(blocks)
	dir := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", s.Text)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the script passed:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out")); string(b) != "1\n" {
		t.Errorf("the blocks did not share one shell: out = %q", b)
	}
	line, what, ok := s.Failure(string(out))
	if !ok || line != 12 || !strings.Contains(what, "exit 1: test $i = 2") {
		t.Fatalf("failure at doc line %d (%v): %q; output:\n%s", line, ok, what, out)
	}

	// A command whose exit differs from its "# exit N:" fails, named.
	blocks, _ = doctest.Blocks(strings.NewReader("```sh\ntrue   # exit 2: it should not pass\n```\n"))
	s = doctest.NewScript(blocks)
	out, err = exec.Command("bash", "-e", "-c", s.Text).CombinedOutput()
	line, what, ok = s.Failure(string(out))
	if err == nil || !ok || line != 2 || !strings.Contains(what, "exit 0, want 2: true") {
		t.Fatalf("err %v, failure at %d (%v) %q; output:\n%s", err, line, ok, what, out)
	}
}
