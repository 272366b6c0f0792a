package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

func TestRecordRestore(t *testing.T) {
	good := events.SnapshotRestored{Server: "s1", Index: 4107, SnapshotIndex: 10, ClusterID: "c", Rows: 46, Checksum: "4b38"}
	for _, c := range []struct {
		name  string
		edit  func(*events.SnapshotRestored)
		field string
	}{
		{"no server", func(p *events.SnapshotRestored) { p.Server = "" }, "Server"},
		{"no index", func(p *events.SnapshotRestored) { p.Index = 0 }, "Index"},
		{"no checksum", func(p *events.SnapshotRestored) { p.Checksum = "" }, "Checksum"},
	} {
		p := good
		c.edit(&p)
		err := server.RecordRestore{Restore: p}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Validate() = %v, want an error naming %s", c.name, err, c.field)
		}
	}
	cmd := server.RecordRestore{Restore: good}
	if err := cmd.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := cmd.Decide(projections.View{}, time.Unix(0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 1 || *d.Events[0].(*events.SnapshotRestored) != good {
		t.Fatalf("Decide appended %#v, want the restore as given", d.Events)
	}
}
