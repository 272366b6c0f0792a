package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testmetric"
)

// newerNamespaces is the namespaces projection of a newer build.
type newerNamespaces struct{ namespaces.Projection }

func (newerNamespaces) Version() int { return namespaces.Projection{}.Version() + 1 }

func testConfig(t *testing.T, dir string) Config {
	cfg := DevConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.RaftTimeout = 100 * time.Millisecond
	cfg.NoSync = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// playBuild makes the agents the test starts next call themselves
// version, until the test ends.
func playBuild(t *testing.T, version string) {
	old := buildVersion
	buildVersion = version
	t.Cleanup(func() { buildVersion = old })
}

func status(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// newerConfig is testConfig with the namespaces projection of a newer
// build.
func newerConfig(t *testing.T, dir string) Config {
	t.Helper()
	newer := testConfig(t, dir)
	for _, p := range all.Projections() {
		if p.Name() == "namespaces" {
			p = newerNamespaces{}
		}
		newer.Projections = append(newer.Projections, p)
	}
	return newer
}

// TestOlderBuildRefusesNewerDataDir: a data directory a build with a
// newer projection version wrote is refused by an older build, naming
// both builds and the projection; the newer build opens it again.
func TestOlderBuildRefusesNewerDataDir(t *testing.T) {
	dir := t.TempDir()
	newer := newerConfig(t, dir)
	playBuild(t, "0.2.0")
	a, err := Start(newer)
	if err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 10*time.Second, "the default namespace", func() bool { return status("http://"+a.HTTPAddr()+"/v1/namespace/default") == 200 })
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}

	buildVersion = "0.1.0"
	_, err = Start(testConfig(t, dir))
	if !errors.Is(err, fsm.ErrDowngrade) {
		t.Fatalf("older build started on a newer directory: %v", err)
	}
	v := namespaces.Projection{}.Version()
	for _, want := range []string{"ordo 0.2.0", "ordo 0.1.0", "projection namespaces v" + strconv.Itoa(v+1) + ", which it knows only at v" + strconv.Itoa(v)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	buildVersion = "0.2.0"
	a, err = Start(newer)
	if err != nil {
		t.Fatalf("newer build after the refusal: %v", err)
	}
	waittest.For(t, 10*time.Second, "the default namespace", func() bool { return status("http://"+a.HTTPAddr()+"/v1/namespace/default") == 200 })
	a.Shutdown()
}

// TestUnknownEventHaltsServer appends, through raft, an entry holding an
// event type this build does not know: the FSM stops there, nothing after
// it applies, /v1/agent/health and ordo_fsm_halted report it, the server
// leaves raft, and a restart of the same build stops at the same entry.
func TestUnknownEventHaltsServer(t *testing.T) {
	dir := t.TempDir()
	playBuild(t, "0.1.0")
	a, err := Start(testConfig(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Shutdown() }()
	base := "http://" + a.HTTPAddr()
	waittest.For(t, 10*time.Second, "the default namespace", func() bool { return status(base+"/v1/namespace/default") == 200 })

	entry := &events.Entry{Time: time.Now().UnixNano(), CommandID: "from-a-newer-build", Events: []events.Event{
		{Type: "ComponentTeleported", Version: 1, ID: "x", Payload: []byte{0x80}}}}
	data, err := events.EncodeEntry(entry)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The answer may be lost to the halt: the server stops raft as soon as
	// its FSM halts, perhaps before raft answers.
	_, index, err := a.Node().Append(ctx, data)
	waittest.For(t, 10*time.Second, "the halt", func() bool { return a.FSM().Halt() != nil })
	h := a.FSM().Halt()
	if err == nil && h.Index != index || !errors.Is(h, events.ErrUnknownType) || !strings.Contains(h.Error(), "ComponentTeleported") {
		t.Fatalf("halt %v, want at the entry appended at %d (%v)", h, index, err)
	}
	index = h.Index
	if a.FSM().Applied() != index-1 {
		t.Fatalf("applied %d, want %d", a.FSM().Applied(), index-1)
	}
	if n, err := archive.Last(a.Store()); err != nil || n >= index {
		t.Fatalf("archive's last index %d (%v), want below %d", n, err, index)
	}

	resp, err := http.Get(base + "/v1/agent/health")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Server struct {
			OK      bool
			Message string
		}
		FSM struct {
			Halted bool
			Index  uint64
			Build  string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || body.Server.OK || !body.FSM.Halted ||
		body.FSM.Index != index || body.FSM.Build != "0.1.0" || !strings.Contains(body.Server.Message, "ComponentTeleported") {
		t.Fatalf("health %d %+v (%v)", resp.StatusCode, body, err)
	}
	if got := testmetric.Value(t, a.Registry(), "ordo_fsm_halted"); got != 1 {
		t.Fatalf("ordo_fsm_halted = %v", got)
	}
	waittest.For(t, 10*time.Second, "raft to stop", func() bool { return a.Node().State() == "Shutdown" })
	// The leader-only processors stop with it.
	waittest.For(t, 10*time.Second, "the processors to stop", func() bool { return testmetric.Value(t, a.Registry(), "ordo_raft_leader") == 0 })
	if _, _, err := a.Node().Append(ctx, data); err == nil {
		t.Fatal("a halted server appended an entry")
	}
	if a.FSM().Applied() != index-1 {
		t.Fatalf("applied %d after the halt", a.FSM().Applied())
	}
	if err := a.Shutdown(); err != nil {
		t.Fatalf("shutdown of a halted server: %v", err)
	}

	// The entry is still in the log: the same build stops at it again.
	a, err = Start(testConfig(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	waittest.For(t, 10*time.Second, "the halt after a restart", func() bool { return a.FSM().Halt() != nil })
	if h := a.FSM().Halt(); h.Index != index || a.FSM().Applied() != index-1 {
		t.Fatalf("after a restart: halt %v, applied %d", h, a.FSM().Applied())
	}
}

// TestOlderBuildRefusesNewerSnapshotFile: a snapshot file a newer build
// saved is refused by an older one with 400 naming the snapshot and both
// builds, and nothing is installed.
func TestOlderBuildRefusesNewerSnapshotFile(t *testing.T) {
	newer := newerConfig(t, t.TempDir())
	playBuild(t, "0.2.0")
	a, err := Start(newer)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + a.HTTPAddr()
	waittest.For(t, 10*time.Second, "the default namespace", func() bool { return status(base+"/v1/namespace/default") == 200 })
	resp, err := http.Get(base + "/v1/operator/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	file, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("save: %d %v", resp.StatusCode, err)
	}
	a.Shutdown()

	buildVersion = "0.1.0"
	b, err := Start(testConfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	base = "http://" + b.HTTPAddr()
	waittest.For(t, 10*time.Second, "the default namespace", func() bool { return status(base+"/v1/namespace/default") == 200 })
	applied := b.FSM().Applied()
	req, _ := http.NewRequest(http.MethodPut, base+"/v1/operator/snapshot", bytes.NewReader(file))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "snapshot") ||
		!strings.Contains(string(body), "ordo 0.2.0") || !strings.Contains(string(body), "ordo 0.1.0") {
		t.Fatalf("restore of a newer build's file: %d %s", resp.StatusCode, body)
	}
	if b.FSM().Halt() != nil || b.FSM().RestoredAt() != 0 {
		t.Fatalf("the refused file reached the FSM: halt %v, restored at %d", b.FSM().Halt(), b.FSM().RestoredAt())
	}
	if got := b.FSM().Applied(); got < applied {
		t.Fatalf("applied %d, was %d", got, applied)
	}
}
