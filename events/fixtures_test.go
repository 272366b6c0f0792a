package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// Golden fixtures: testdata/<Type>.v<N>.msgpack holds an encoded Event of
// every version of every type ever written, and testdata/<Type>.v<N>.json
// the payload it must decode to at the current version. Both are frozen:
// -update writes only the files that are missing. When a type gets a new
// version, its new fixture is written by -update, and the .json of its older
// fixtures is edited by hand (and reviewed) to the upcast result.
var update = flag.Bool("update", false, "write missing golden fixtures in testdata (never rewrites existing ones)")

// fixture describes how -update writes one fixture.
type fixture struct {
	Type    string
	Version uint16
	// Payload is encoded as the fixture's payload, in the shape of Version.
	Payload any
	Keys    []events.Key
	// Want is what the fixture decodes to at the current version.
	Want events.Payload
}

// oldFixtures are the versions no longer written. Add the previous version
// here (in its frozen shape) before bumping a type.
var oldFixtures = []fixture{
	{
		Type: "NamespaceUpserted", Version: 1,
		Payload: &events.NamespaceUpsertedV1{Name: "legacy", Description: "written before Meta"},
		Keys:    []events.Key{{Kind: events.KindNamespace, Value: "legacy"}},
		Want:    &events.NamespaceUpserted{Namespace: events.Namespace{Name: "legacy", Description: "written before Meta"}},
	},
	{
		Type: "NamespaceUpserted", Version: 2,
		Payload: &events.NamespaceUpsertedV2{Namespace: events.NamespaceV2{
			Name: "payments", Description: "Payment services", Meta: map[string]string{"owner": "team-pay", "tier": "1"}}},
		Keys: []events.Key{{Kind: events.KindNamespace, Value: "payments"}},
		Want: &events.NamespaceUpserted{Namespace: events.Namespace{
			Name: "payments", Description: "Payment services", Meta: map[string]string{"owner": "team-pay", "tier": "1"}}},
	},
}

// allFixtures returns oldFixtures and one fixture of every registered type's
// current version, from eventstest.Samples.
func allFixtures() []fixture {
	out := append([]fixture(nil), oldFixtures...)
	samples := eventstest.Samples()
	for _, typ := range events.Types() {
		p, ok := samples[typ.Name]
		if !ok {
			continue // TestSamplesCoverRegistry reports it
		}
		out = append(out, fixture{Type: typ.Name, Version: typ.Version, Payload: p, Keys: p.EntityKeys(), Want: p})
	}
	return out
}

// envelope returns the fixture's event with every envelope field set.
func (f fixture) envelope() (events.Event, error) {
	raw, err := events.Marshal(f.Payload) // sorted map keys: fixtures must be canonical
	if err != nil {
		return events.Event{}, err
	}
	return events.Event{
		Type: f.Type, Version: f.Version,
		Index: 4242, Seq: 3, Time: 1_700_000_000_123_456_789,
		ID: "2ZJ8yQ8Vv1wVJbH7X2m8e0g3k4Q", Actor: "fixture", CorrelationID: "cmd-fixture",
		Keys: f.Keys, Payload: raw,
	}, nil
}

func fixtureBase(typ string, version uint16) string {
	return filepath.Join("testdata", fmt.Sprintf("%s.v%d", typ, version))
}

// writeNew creates path with data, failing if it exists: fixtures are frozen.
func writeNew(path string, data []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

func writeMissingFixtures(t *testing.T) {
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range allFixtures() {
		ev, err := f.envelope()
		if err != nil {
			t.Fatalf("%s v%d: %v", f.Type, f.Version, err)
		}
		data := eventstest.EncodeEvent(t, &ev)
		want, err := json.MarshalIndent(f.Want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		base := fixtureBase(f.Type, f.Version)
		for path, b := range map[string][]byte{base + ".msgpack": data, base + ".json": append(want, '\n')} {
			wrote, err := writeNew(path, b)
			if err != nil {
				t.Fatal(err)
			}
			if wrote {
				t.Logf("wrote %s", path)
			}
		}
	}
}

var fixtureName = regexp.MustCompile(`^([A-Za-z0-9]+)\.v([0-9]+)\.msgpack$`)

// readFixtures returns every testdata/*.msgpack by file name.
func readFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func TestGoldenFixtures(t *testing.T) {
	if *update {
		writeMissingFixtures(t)
	}
	fixtures := readFixtures(t)
	if len(fixtures) == 0 {
		t.Fatal("no fixtures in testdata; run go test ./events -run TestGoldenFixtures -update")
	}
	names := make([]string, 0, len(fixtures))
	for name := range fixtures {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := fixtures[name]
		t.Run(name, func(t *testing.T) {
			m := fixtureName.FindStringSubmatch(name)
			if m == nil {
				t.Fatalf("fixture name %q is not <Type>.v<N>.msgpack", name)
			}
			version, err := strconv.ParseUint(m[2], 10, 16)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := events.DecodeEvent(data)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != m[1] || ev.Version != uint16(version) {
				t.Fatalf("fixture holds %s v%d", ev.Type, ev.Version)
			}
			if ev.Index != 4242 || ev.Seq != 3 || ev.Time != 1_700_000_000_123_456_789 || ev.ID == "" ||
				ev.Actor != "fixture" || ev.CorrelationID != "cmd-fixture" {
				t.Errorf("envelope fields not kept: %+v", ev)
			}
			typ, ok := events.Lookup(ev.Type)
			if !ok {
				t.Fatalf("type %s is not registered: old events must stay readable", ev.Type)
			}
			p, err := events.Decode(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev.Keys, p.EntityKeys()) {
				t.Errorf("archived keys %v, payload's keys %v", ev.Keys, p.EntityKeys())
			}

			jsonPath := filepath.Join("testdata", name[:len(name)-len(".msgpack")]+".json")
			wantJSON, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatalf("expectation: %v", err)
			}
			want := typ.New()
			dec := json.NewDecoder(bytes.NewReader(wantJSON))
			dec.DisallowUnknownFields()
			if err := dec.Decode(want); err != nil {
				t.Fatalf("%s: %v", jsonPath, err)
			}
			if !reflect.DeepEqual(p, want) {
				got, _ := json.MarshalIndent(p, "", "  ")
				t.Fatalf("%s v%d decodes to\n%s\nwant (%s)\n%s", ev.Type, ev.Version, got, jsonPath, wantJSON)
			}
			// Old versions upcast to the current version; the current
			// version's bytes are what New still writes.
			if ev.Version == typ.Version {
				again, err := events.New(ev.ID, p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again.Payload, ev.Payload) {
					t.Errorf("current version re-encodes differently:\n fixture %x\n     now %x", ev.Payload, again.Payload)
				}
			}
		})
	}
	// Every expectation belongs to a fixture.
	jsons, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, j := range jsons {
		base := filepath.Base(j)
		if _, ok := fixtures[base[:len(base)-len(".json")]+".msgpack"]; !ok {
			t.Errorf("%s has no .msgpack fixture", j)
		}
	}
}

// TestFixturesCoverEveryVersion fails when a type, or a version of one, has
// no golden fixture, so adding a type or bumping a version without one fails.
func TestFixturesCoverEveryVersion(t *testing.T) {
	fixtures := readFixtures(t)
	for _, typ := range events.Types() {
		for v := uint16(1); v <= typ.Version; v++ {
			name := fmt.Sprintf("%s.v%d.msgpack", typ.Name, v)
			if _, ok := fixtures[name]; !ok {
				t.Errorf("missing fixture testdata/%s; run go test ./events -run TestGoldenFixtures -update", name)
			}
		}
	}
	for _, f := range oldFixtures {
		if typ, ok := events.Lookup(f.Type); !ok || f.Version >= typ.Version {
			t.Errorf("oldFixtures lists %s v%d, which is not an old version", f.Type, f.Version)
		}
	}
}

func TestUpdateNeverRewrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "X.v1.msgpack")
	if wrote, err := writeNew(path, []byte("frozen")); !wrote || err != nil {
		t.Fatalf("first write: %v, %v", wrote, err)
	}
	if wrote, err := writeNew(path, []byte("changed")); wrote || err != nil {
		t.Fatalf("second write: %v, %v; want skipped", wrote, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "frozen" {
		t.Fatalf("fixture rewritten to %q", b)
	}
}
