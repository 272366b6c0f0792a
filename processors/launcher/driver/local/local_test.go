package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/local"
	"github.com/ordoplane/ordo/processors/launcher/driver/local/localtest"
)

// advance steps m until it is done, on a clock moved by step each time,
// for at most limit of real time.
func advance(t *testing.T, m driver.Machine, now *time.Time, step time.Duration, limit time.Duration) error {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		done, err := m.Advance(context.Background(), *now)
		if done || err != nil {
			return err
		}
		*now = now.Add(step)
		time.Sleep(20 * time.Millisecond) // a real process is starting or stopping
	}
	t.Fatalf("machine not done after %v", limit)
	return nil
}

// A create starts a real client agent process in the instance's own
// directory, configured with the servers, the node pool (the pool's
// node_pool attribute) and the instance id in the node meta; it is done
// once the client wrote its node id. A delete kills the process group and
// removes the directory.
func TestCreateAndDelete(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(func() { local.KillAll(dir) })
	d, err := local.New(local.Config{Binary: localtest.Build(t), Dir: dir, Servers: []string{"127.0.0.1:1"},
		TaskDrivers: []string{"mock"}, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	now := time.Unix(1_700_000_000, 0)
	m := d.Create(driver.Spec{InstanceID: "inst-1", Label: "small", Pool: "main",
		Attributes: map[string]string{"node_pool": "batch", "zone": "a"}})
	if err := advance(t, m, &now, time.Second, 20*time.Second); err != nil {
		t.Fatalf("create: %v", err)
	}
	res := m.Result()
	pid, err := strconv.Atoi(strings.TrimPrefix(res.ExternalID, "pid-"))
	if err != nil || pid <= 0 {
		t.Fatalf("external id %q names no pid", res.ExternalID)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("instance process %d not running: %v", pid, err)
	}
	if d.Running() != 1 {
		t.Fatalf("running = %d, want 1", d.Running())
	}
	var cfg struct {
		DataDir string `json:"data_dir"`
		Client  struct {
			Servers  []string          `json:"servers"`
			NodePool string            `json:"node_pool"`
			Meta     map[string]string `json:"meta"`
		} `json:"client"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "inst-1", "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Client.Meta[local.InstanceMetaKey] != "inst-1" || cfg.Client.Meta["zone"] != "a" || cfg.Client.NodePool != "batch" ||
		len(cfg.Client.Servers) != 1 || cfg.DataDir != filepath.Join(dir, "inst-1", "data") {
		t.Fatalf("client config = %+v", cfg)
	}

	if err := advance(t, d.Delete("inst-1", res.ExternalID), &now, time.Second, 20*time.Second); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("instance process %d still there after delete (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "inst-1")); !os.IsNotExist(err) {
		t.Fatalf("instance dir still there: %v", err)
	}
	if d.Running() != 0 {
		t.Fatalf("running = %d after delete", d.Running())
	}
}

// A client that cannot start (here: a binary that exits at once) fails
// the create instead of leaving it building forever; a type the config
// does not list is a permanent error.
func TestCreateFailsWhenClientExits(t *testing.T) {
	dir := t.TempDir()
	d, err := local.New(local.Config{Binary: "/bin/false", Dir: dir, Servers: []string{"127.0.0.1:1"},
		InstanceTypes: map[string]driver.Resources{"small": {Cores: 1, RAMMB: 512}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	now := time.Unix(1_700_000_000, 0)
	err = advance(t, d.Create(driver.Spec{InstanceID: "inst-2", Pool: "main"}), &now, time.Second, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("create of a client that exits: err = %v", err)
	}
	if _, err := d.InstanceType(context.Background(), "huge"); !errors.Is(err, driver.ErrPermanent) {
		t.Fatalf("unknown type: err = %v, want ErrPermanent", err)
	}
	if r, err := d.InstanceType(context.Background(), "small"); err != nil || r.RAMMB != 512 {
		t.Fatalf("small = %+v, %v", r, err)
	}
}
