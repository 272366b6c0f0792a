package doctest

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Block is one fenced block of a Markdown file.
type Block struct {
	// Line is the line of its opening fence, from 1.
	Line int
	// Lang is the info string's first word ("" for none), Info the whole.
	Lang, Info string
	// Skip is the reason given by "sh skip: <reason>"; "" for a block run.
	Skip string
	// Body is the block's lines, dedented as far as its fence.
	Body []string
}

// Runnable reports whether the test runs the block: a sh block not skipped.
func (b Block) Runnable() bool { return b.Lang == "sh" && b.Skip == "" }

// shells are the languages of shell blocks; such a block must be fenced
// "sh" or "sh skip: <reason>".
var shells = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true}

// Blocks reads the fenced blocks of a Markdown file (``` fences, indented
// or not). It returns an error naming the line for a block that is not
// closed, a fence with no language, or a shell block neither "sh" nor
// "sh skip: <reason>".
func Blocks(r io.Reader) ([]Block, error) {
	var (
		out    []Block
		cur    *Block
		indent string
		n      int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if cur != nil {
			if strings.TrimSpace(trimmed) == "```" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.Body = append(cur.Body, strings.TrimPrefix(line, indent))
			continue
		}
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		b := Block{Line: n, Info: info}
		b.Lang, _, _ = strings.Cut(info, " ")
		switch {
		case info == "":
			return nil, fmt.Errorf("line %d: a fence with no language: name it (sh, sh skip: <reason>, text, hcl, json, …)", n)
		case shells[b.Lang] && info == "sh":
		case shells[b.Lang]:
			rest, ok := strings.CutPrefix(info, "sh skip:")
			if !ok || strings.TrimSpace(rest) == "" {
				return nil, fmt.Errorf("line %d: shell block %q: fence it ```sh to run it or ```sh skip: <reason>", n, info)
			}
			b.Skip = strings.TrimSpace(rest)
		}
		indent = line[:len(line)-len(trimmed)]
		cur = &b
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: block not closed", cur.Line)
	}
	return out, nil
}

// expectExit matches a trailing "# exit N: why" comment.
var expectExit = regexp.MustCompile(`\s#\s*exit (\d+):`)

// Script joins the runnable blocks into one bash script, run with
// `bash -e`. Lines[i] is the doc line of the script's line i+1 (0 for the
// preamble). A failing command makes the script print a Failure line,
// "doctest: script line <n>: exit <status>: <command>", and exit.
type Script struct {
	Text  string
	Lines []int
}

// NewScript returns the script of blocks' runnable blocks.
func NewScript(blocks []Block) *Script {
	var b strings.Builder
	s := &Script{}
	add := func(text string, docLine int) {
		b.WriteString(text + "\n")
		s.Lines = append(s.Lines, docLine)
	}
	add(`set -o pipefail -o errtrace`, 0)
	add(`trap 'rc=$?; echo "doctest: script line $LINENO: exit $rc: $BASH_COMMAND" >&2; exit $rc' ERR`, 0)
	for _, blk := range blocks {
		if !blk.Runnable() {
			continue
		}
		for i, l := range blk.Body {
			if m := expectExit.FindStringSubmatchIndex(l); m != nil {
				want, cmd := l[m[2]:m[3]], strings.TrimSpace(l[:m[0]])
				l = fmt.Sprintf(`if %s; then rc=0; else rc=$?; fi; if [ $rc -ne %s ]; then echo "doctest: script line $LINENO: exit $rc, want %s: %s" >&2; exit 1; fi`,
					cmd, want, want, strings.NewReplacer(`"`, `\"`, "$", `\$`, "`", "\\`").Replace(cmd))
			}
			add(l, blk.Line+1+i)
		}
	}
	s.Text = b.String()
	return s
}

// failure matches the line a failing script prints.
var failure = regexp.MustCompile(`doctest: script line (\d+): (.*)`)

// Failure finds the failure line in a script's stderr and returns the doc
// line it maps to and what failed; ok is false when there is none.
func (s *Script) Failure(stderr string) (docLine int, what string, ok bool) {
	m := failure.FindAllStringSubmatch(stderr, -1)
	if m == nil {
		return 0, "", false
	}
	last := m[len(m)-1]
	var n int
	fmt.Sscan(last[1], &n)
	if n >= 1 && n <= len(s.Lines) {
		docLine = s.Lines[n-1]
	}
	return docLine, last[2], true
}
