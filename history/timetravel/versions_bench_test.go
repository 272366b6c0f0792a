package timetravel

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// BenchmarkVersionsCost measures what keeping the versions store adds to
// the FSM: the process's CPU per applied entry (namespace upserts over
// 1,000 names, raft batches of 64) until the versions writer has caught
// up, with the store off and on.
func BenchmarkVersionsCost(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("versions=%v", on), func(b *testing.B) {
			h := &history{dir: b.TempDir(), store: pt.OpenStore(b)}
			h.fsm = pt.NewFSM(b, h.store)
			tt, err := New(Config{Options: Options{DisableVersions: !on}, DataDir: h.dir,
				FSM: h.fsm, Projections: all.Projections(), Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			defer tt.Close()
			const batch = 64
			var index uint64
			c0 := cpu()
			for b.Loop() {
				logs := make([]raftlog.Log, batch)
				for i := range logs {
					index++
					e := pt.Entry(b, fmt.Sprint("cmd-", index), &events.NamespaceUpserted{Namespace: events.Namespace{
						Name: fmt.Sprint("ns-", index%1000), Description: fmt.Sprint("entry ", index)}})
					logs[i] = pt.Log(b, index, e)
				}
				h.fsm.Apply(logs)
			}
			if on {
				tt.versions.settle()
				if err := tt.versions.store.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(index), "cpu-µs/entry")
			b.ReportMetric(float64(tt.VersionsBytes())/float64(index), "versions-B/entry")
		})
	}
}

// cpu returns the process's user and system CPU time so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
