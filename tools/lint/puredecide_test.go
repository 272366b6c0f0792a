package lint

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pureProcessors lists processor packages that are pure as a whole: the
// scheduler and what it reads, and the job plan dry run.
var pureProcessors = []string{"processors/scheduler", "processors/jobplan", "processors/schedstate"}

// pureFiles names the files of the other processors that hold their pure
// decisions: the runner beside each takes a clock, the decision takes the
// time as an argument.
var pureFiles = []string{"decide.go", "evaluate.go", "tracker.go", "miss.go"}

// clockCalls are the time package's functions that read or wait on the
// system clock.
var clockCalls = map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "Tick": true,
	"NewTimer": true, "NewTicker": true, "AfterFunc": true, "Sleep": true}

// TestPureDecisions: the processors' decision functions read no clock and
// no randomness, so the same inputs give the same decision (and a
// datadriven script can pin it down).
func TestPureDecisions(t *testing.T) {
	for _, p := range listPackages(t) {
		r := rel(p.ImportPath)
		if !strings.HasPrefix(r, "processors/") || isTestHelper(p.ImportPath) {
			continue
		}
		whole := under(p.ImportPath, pureProcessors)
		for _, f := range p.GoFiles {
			if !whole && !slices.Contains(pureFiles, f) {
				continue
			}
			checkPureFile(t, filepath.Join(p.Dir, f))
		}
	}
}

func checkPureFile(t *testing.T, path string) {
	t.Helper()
	fset, file := parseFile(t, path)
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == "math/rand" || p == "math/rand/v2" || p == "crypto/rand" || p == module+"/clock" {
			t.Errorf("%s imports %s: a decision takes its time and randomness as arguments", fset.Position(imp.Pos()), p)
		}
	}
	checkTimeCalls(t, fset, file, clockCalls, "a decision takes the time as an argument")
}

// clockFree lists files of clockTrees that may read the system clock
// themselves: the mirror's Verify is a one-shot check a command runs,
// timing itself.
var clockFree = []string{"processors/mirror/verify.go"}

// clockTrees are the trees whose components take a clock.Clock: the
// processors, the client agent, the command pipeline with the commands
// it runs, the history tools and the state store. The HTTP layer
// (commands/httpapi) times and bounds requests on the system clock and
// is not one of them.
var clockTrees = []string{"processors", "client", "commands", "history", "storage/kv"}
var clockExempt = []string{"commands/httpapi"}

// TestComponentsWaitOnTheirClock: the components of clockTrees read the
// time and wait only through the clock.Clock in their Config, so a test's
// fake clock controls every wait they make.
func TestComponentsWaitOnTheirClock(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, clockTrees) || under(p.ImportPath, clockExempt) || isTestHelper(p.ImportPath) {
			continue
		}
		for _, f := range p.GoFiles {
			if slices.Contains(clockFree, rel(p.ImportPath)+"/"+f) {
				continue
			}
			fset, file := parseFile(t, filepath.Join(p.Dir, f))
			checkTimeCalls(t, fset, file, clockCalls, "wait on Config.Clock (package clock) instead")
		}
	}
}
