package events_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// TestVolumeSecretsRedacted: a volume's secrets never leave the cluster
// (the event stream, the Kafka mirror and history use Redacted).
func TestVolumeSecretsRedacted(t *testing.T) {
	ev := eventstest.New(t, "ev", &events.CSIVolumeRegistered{Volume: events.CSIVolume{ID: "db", Namespace: "default", PluginID: "p"},
		Secrets: map[string]string{"token": "hunter2"}})
	m, err := events.Redacted(&ev)
	if err != nil {
		t.Fatal(err)
	}
	if m["Secrets"] != events.RedactedValue {
		t.Fatalf("Secrets = %v, want redacted", m["Secrets"])
	}
	if vol, _ := m["Volume"].(map[string]any); vol["ID"] != "db" {
		t.Fatalf("volume not kept: %v", m["Volume"])
	}
}
