package events

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// filledJob returns a job with every field set (fill).
func filledJob() Job {
	var p plainJob
	fill(reflect.ValueOf(&p).Elem(), 0)
	return Job(p)
}

// serviceJob is a job as registrations mostly send one: a group of tasks
// with resources, no policies.
func serviceJob() Job {
	return Job{ID: "web", Name: "web", Namespace: "team-1", Type: JobTypeService, Priority: 50, Datacenters: []string{"dc1", "dc2"},
		NodePool: "default", Version: 3, SubmitTime: -5, TaskGroups: []TaskGroup{
			{Name: "web", Count: 4, Tasks: []Task{{Name: "server", Driver: "exec", Resources: &Resources{CPU: 100, MemoryMB: 64, MemoryMaxMB: 128}},
				{Name: "sidecar", Driver: "exec", ShutdownDelay: 7, Config: TaskConfig{"command": "/bin/true"}}}},
			{Name: "db", Count: 1, MaxClientDisconnect: 9, Tasks: []Task{{Name: "pg"}}}}}
}

// TestJobDecoder: a job with no field, one, every field, and a service
// job decode from bytes as reflection decodes them (also into a job
// already set), alone and in a registration's payload, and a reader that
// is not a byte slice's gets reflection's answer.
func TestJobDecoder(t *testing.T) {
	for _, j := range []Job{{}, {ID: "x"}, filledJob(), serviceJob()} {
		data, err := Marshal(&plainJobRegistered{Job: j})
		if err != nil {
			t.Fatal(err)
		}
		sameAsReflection(t, data, new(JobRegistered), new(plainJobRegistered))
		job, err := Marshal((*plainJob)(&j))
		if err != nil {
			t.Fatal(err)
		}
		sameAsReflection(t, job, new(Job), new(plainJob))
		set, plainSet := serviceJob(), plainJob(serviceJob())
		set.Meta, plainSet.Meta = map[string]string{"kept": "yes"}, map[string]string{"kept": "yes"}
		sameAsReflection(t, job, &set, &plainSet)
		var viaReader Job
		if err := msgpack.Unmarshal(job, &viaReader); err != nil || !reflect.DeepEqual(viaReader, j) {
			t.Fatalf("through a reader: %+v, %v", viaReader, err)
		}
		samePayload(t, &JobRegistered{Job: j})
	}
}

// TestJobDecodesDirectly: a registration's payload in its plain form
// takes the direct path (decodeFast), its groups and tasks too.
func TestJobDecodesDirectly(t *testing.T) {
	j := serviceJob()
	data, err := Marshal(&JobRegistered{Job: j})
	if err != nil {
		t.Fatal(err)
	}
	var p JobRegistered
	if !p.decodeFast(&fastReader{b: data}) || !reflect.DeepEqual(p.Job, j) {
		t.Fatalf("decoded %+v, want %+v", p.Job, j)
	}
	// A second copy of the groups goes to reflection.
	d := fastReader{b: []byte{0x82, 0xa3, 't', 'g', 's', 0x90, 0xa3, 't', 'g', 's', 0x90}}
	if new(Job).decodeFast(&d) {
		t.Fatal("a job with its groups twice decoded directly")
	}
}

func FuzzJobDecoder(f *testing.F) {
	full, service := filledJob(), serviceJob()
	addEncoded(f, (*plainJob)(&full), (*plainJob)(&service), &plainJob{})
	f.Add([]byte{0xc0})
	f.Add([]byte{0x81, 0xa3, 't', 'g', 's', 0x91, 0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		sameAsReflection(t, data, new(Job), new(plainJob))
		s := serviceJob()
		sameAsReflection(t, data, &s, (*plainJob)(ptr(serviceJob())))
	})
}
