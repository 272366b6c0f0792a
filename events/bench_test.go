package events

import (
	"fmt"
	"testing"
)

// BenchmarkDecodeEvent decodes an archived event carrying four placed
// allocations, as a rebuild's reader does (the payload is kept raw).
func BenchmarkDecodeEvent(b *testing.B) {
	placed := &AllocsPlaced{EvalID: "eval-1"}
	for k := range 4 {
		placed.Allocs = append(placed.Allocs, Allocation{ID: fmt.Sprintf("alloc-1-%d", k), Namespace: "team-1", EvalID: "eval-1",
			Name: fmt.Sprintf("web.web[%d]", k), NodeID: "node-0001", JobID: "job-1", TaskGroup: "web",
			Resources: Resources{CPU: 100, MemoryMB: 64}, DesiredStatus: AllocDesiredRun, ClientStatus: AllocClientPending, CreateTime: 1})
	}
	ev, err := New("e1", placed)
	if err != nil {
		b.Fatal(err)
	}
	ev.Index, ev.Seq, ev.Time = 7, 1, 42
	data, err := EncodeEvent(&ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeEvent(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeClientUpdate decodes the payload of a client's update of
// one allocation, the most frequent event of a scheduling history, as a
// rebuild's reader does once for every projection (Predecode).
func BenchmarkDecodeClientUpdate(b *testing.B) {
	ev, err := New("e1", &AllocsClientUpdated{NodeID: "node-0001",
		Updates: []AllocClientUpdate{{ID: "alloc-1-0", ClientStatus: AllocClientRunning}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ev.Payload)))
	for b.Loop() {
		ev.decoded = nil
		if _, err := Decode(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodePlaced decodes the payload of a placement of four
// allocations, as a rebuild's reader does (Predecode), and the scheduler's
// reads of allocations decode each.
func BenchmarkDecodePlaced(b *testing.B) {
	placed := make([]Allocation, 4)
	for k := range placed {
		placed[k] = Allocation{ID: fmt.Sprintf("alloc-1-%d", k), Namespace: "team-1", EvalID: "eval-1",
			Name: fmt.Sprintf("web.web[%d]", k), NodeID: "node-0001", JobID: "job-1", JobVersion: 1,
			TaskGroup: "web", Resources: Resources{CPU: 100, MemoryMB: 64},
			DesiredStatus: AllocDesiredRun, ClientStatus: AllocClientPending, CreateTime: 5}
	}
	benchDecode(b, &AllocsPlaced{EvalID: "eval-1", Allocs: placed})
}

// BenchmarkEncodeAllocation encodes an allocation row as the allocations
// projection writes it after its client reported it running (one task's
// state), onto a buffer it reuses, as a projection's writer does.
func BenchmarkEncodeAllocation(b *testing.B) {
	a := &Allocation{ID: "alloc-1-0", Namespace: "team-1", EvalID: "eval-1", Name: "web.web[0]", NodeID: "node-0001",
		JobID: "job-1", JobVersion: 1, TaskGroup: "web", Resources: Resources{CPU: 100, MemoryMB: 64},
		DesiredStatus: AllocDesiredRun, ClientStatus: AllocClientRunning, CreateTime: 5, ModifyTime: 6,
		TaskStates: map[string]*TaskState{"server": {State: TaskStateRunning, StartedAt: 6}}}
	buf, err := AppendMarshal(nil, a)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendMarshal(buf[:0], a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeJobRegistered decodes the payload of a registration of a
// service job of one group and task, as a rebuild's reader does
// (Predecode) and as every read of a job's row does.
func BenchmarkDecodeJobRegistered(b *testing.B) {
	benchDecode(b, &JobRegistered{Job: Job{ID: "job-1", Name: "web", Namespace: "team-1", Type: JobTypeService,
		Priority: 50, Datacenters: []string{"dc1"}, NodePool: "default", Version: 1,
		TaskGroups: []TaskGroup{{Name: "web", Count: 4, Tasks: []Task{{Name: "server", Driver: "exec",
			Resources: &Resources{CPU: 100, MemoryMB: 64}}}}}}})
}

// benchDecode measures decoding p's payload afresh each time, as a
// rebuild's reader does.
func benchDecode(b *testing.B, p Payload) {
	ev, err := New("e1", p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ev.Payload)))
	b.ReportAllocs()
	for b.Loop() {
		ev.decoded = nil
		if _, err := Decode(&ev); err != nil {
			b.Fatal(err)
		}
	}
}
