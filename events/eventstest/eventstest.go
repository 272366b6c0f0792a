package eventstest

import (
	"maps"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Samples returns a fully populated payload of every event type this
// package knows, keyed by type name. events' own tests check that the set
// equals the registry, so a type added without a sample fails them.
func Samples() map[string]events.Payload {
	out := map[string]events.Payload{
		"NamespaceUpserted": &events.NamespaceUpserted{Namespace: events.Namespace{
			Name:           "payments",
			Description:    "Payment services",
			Meta:           map[string]string{"owner": "team-pay", "tier": "1"},
			VariablesQuota: 1 << 20,
		}},
		"NamespaceDeleted": &events.NamespaceDeleted{Name: "payments"},
		"ServerRegistered": &events.ServerRegistered{ID: "server-1", RaftAddr: "10.0.0.1:4647", HTTPAddr: "10.0.0.1:4646"},
		"ServerRemoved":    &events.ServerRemoved{ID: "server-1"},
		"AutopilotConfigUpdated": &events.AutopilotConfigUpdated{Config: events.AutopilotConfig{CleanupDeadServers: true,
			LastContactThreshold: time.Second, MaxTrailingLogs: 500, MinQuorum: 3, ServerStabilizationTime: 20 * time.Second}},
		"SnapshotRestored": &events.SnapshotRestored{Server: "server-1", Index: 52310, SnapshotIndex: 48213,
			ClusterID: "2TzMWxJ0cVVR4x3Q3b7W0qUKn0T", SavedBy: "server-2", SavedAt: 1764597720000000000, Rows: 1204331,
			Checksum: "4b380894aa70617d4876543fc806fb1cc96d7e8813af138df8d04cbf458796a8"},
		"JobRegistered":   &events.JobRegistered{Job: SampleJob()},
		"JobDeregistered": &events.JobDeregistered{Namespace: "payments", ID: "web", Purge: true, NoShutdownDelay: true},
	}
	maps.Copy(out, nodeSamples())
	maps.Copy(out, schedSamples())
	maps.Copy(out, aclSamples())
	maps.Copy(out, keyringSamples())
	maps.Copy(out, variableSamples())
	maps.Copy(out, launcherSamples())
	maps.Copy(out, capacitySamples())
	maps.Copy(out, csiSamples())
	maps.Copy(out, jobScalingSamples())
	maps.Copy(out, serviceSamples())
	maps.Copy(out, nodePoolSamples())
	return out
}

// New returns events.New(id, p), failing tb on error.
func New(tb testing.TB, id string, p events.Payload) events.Event {
	tb.Helper()
	ev, err := events.New(id, p)
	if err != nil {
		tb.Fatalf("events.New(%T): %v", p, err)
	}
	return ev
}

// EncodeEntry returns events.EncodeEntry(e), failing tb on error.
func EncodeEntry(tb testing.TB, e *events.Entry) []byte {
	tb.Helper()
	b, err := events.EncodeEntry(e)
	if err != nil {
		tb.Fatalf("encode entry: %v", err)
	}
	return b
}

// EncodeEvent returns events.EncodeEvent(ev), failing tb on error.
func EncodeEvent(tb testing.TB, ev *events.Event) []byte {
	tb.Helper()
	b, err := events.EncodeEvent(ev)
	if err != nil {
		tb.Fatalf("encode event: %v", err)
	}
	return b
}
