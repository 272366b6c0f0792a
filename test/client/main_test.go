package client

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/ordoplane/ordo/client/driver/docker/dockertest"
)

// TestMain runs the tests (every top-level test is parallel, and at
// least four run at once unless -test.parallel says otherwise), or serves
// the workload test's "web" job when this binary runs as its task
// (serveEnv), and stops the dockerd the docker tests started, if any.
func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		serve()
		return
	}
	flag.Parse()
	if !flagSet("test.parallel") {
		// The tests mostly wait on agents, processes and timers: run
		// more of them at once than the machine has cores.
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if err := stopDockerd(); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// flagSet reports whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// docker is the package's own dockerd, started by the first test that
// needs it (dockerd) and stopped by TestMain: a run of the other tests,
// or a child process of this binary (TestCrash's), starts none.
var dockerdState struct {
	once   sync.Once
	daemon *dockertest.Daemon
	err    error
}

// dockerd returns the package's dockerd, starting it on first use; it
// fails t when the daemon cannot start (docker tests fail, never skip).
func dockerd(t testing.TB) *dockertest.Daemon {
	t.Helper()
	dockerdState.once.Do(func() { dockerdState.daemon, dockerdState.err = dockertest.Start() })
	if dockerdState.err != nil {
		t.Fatalf("dockertest: %v", dockerdState.err)
	}
	return dockerdState.daemon
}

// stopDockerd stops the dockerd if a test started one.
func stopDockerd() error {
	if dockerdState.daemon == nil {
		return nil
	}
	return dockerdState.daemon.Stop()
}
