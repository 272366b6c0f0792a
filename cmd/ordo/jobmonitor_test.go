package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// startDevClientAgent starts a dev agent with its client (the exec
// driver) and returns its address once the node is ready.
func startDevClientAgent(t *testing.T) string {
	t.Helper()
	addr := startDevAgent(t, func(c *agent.Config) {
		c.Client = agent.DevClientConfig()
		c.Client.NodeName = "dev-node"
	})
	testagent.WaitFor(t, 20*time.Second, "the dev node ready", func() bool {
		code, stdout, _ := runCLI("node", "status", "-address", addr)
		return code == 0 && strings.Contains(stdout, "ready")
	})
	return addr
}

// A typo'd driver: `job run` follows the evaluation, says which
// constraint filtered the node, and exits 2 as Nomad's does.
func TestJobRunExplainsPlacementFailure(t *testing.T) {
	addr := startDevClientAgent(t)
	spec := strings.NewReplacer(`type = "batch"`, `type = "service"`, "count = 2", "count = 1",
		`driver = "exec"`, `driver = "exce"`).Replace(jobHCL)
	code, stdout, stderr := runCLI("job", "run", "-address", addr, writeFile(t, "typo.hcl", spec))
	for _, want := range []string{
		"==> Monitoring evaluation \"",
		"    Evaluation triggered by job \"web\"\n",
		"\" finished with status \"complete\" but failed to place all allocations:\n",
		"    Task Group \"g\" (failed to place 1 allocation):\n      * Constraint \"missing drivers\" filtered 1 node\n",
		"    Evaluation \"",
		"\" waiting for additional capacity to place remainder\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("job run lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitCodePlacementFailed || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 2 and nothing", code, stderr)
	}
	// job status shows the same reasons under "Placement Failure".
	_, stdout, _ = runCLI("job", "status", "-address", addr, "web")
	if !strings.Contains(stdout, "\nPlacement Failure\nTask Group \"g\" (failed to place 1 allocation):\n  * Constraint \"missing drivers\" filtered 1 node\n") {
		t.Errorf("job status lacks the placement failure:\n%s", stdout)
	}
}

// A job that places: `job run` prints the placement, then follows the
// deployment until it succeeds, and exits 0.
func TestJobRunMonitorsDeployment(t *testing.T) {
	addr := startDevClientAgent(t)
	code, stdout, stderr := runCLI("job", "run", "-address", addr, "../../docs/examples/hello.hcl")
	for _, want := range []string{
		"    Evaluation triggered by job \"hello\"\n",
		"\" created: node \"",
		"\", group \"hello\"\n",
		"\" finished with status \"complete\"\n",
		"==> Monitoring deployment \"",
		"\" successful\n",
		"\nDeployed\nTask Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline\nhello       1        1       1        0",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("job run lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI("job", "stop", "-address", addr, "hello"); code != 0 {
		t.Errorf("stop: %d %s", code, stderr)
	}
}
