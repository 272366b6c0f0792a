package jobs

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// The rows' twins without their decoders: what reflection decodes.
type (
	plainSummaryRow summaryRow
	plainHead       jobHead
)

// sameRowDecoding fails t unless data decodes through events.Unmarshal
// (the rows' own decoders) into fast as reflection decodes it into plain:
// the same value, or an error from both.
func sameRowDecoding(t *testing.T, data []byte, fast, plain any) {
	t.Helper()
	werr := msgpack.Unmarshal(data, plain)
	gerr := events.Unmarshal(data, fast)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%T: %v, reflection: %v", fast, gerr, werr)
	}
	got := reflect.ValueOf(fast).Elem().Interface()
	want := reflect.ValueOf(plain).Elem().Convert(reflect.TypeOf(fast).Elem()).Interface()
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%T decoded %+v\nreflection %+v", fast, got, want)
	}
}

// sameRowsDecoding checks data as each of the rows.
func sameRowsDecoding(t *testing.T, data []byte) {
	t.Helper()
	sameRowDecoding(t, data, new(allocRef), new(plainRef))
	sameRowDecoding(t, data, new(summaryRow), new(plainSummaryRow))
	sameRowDecoding(t, data, new(jobHead), new(plainHead))
	kept := summaryRow{Status: "kept", Children: &Children{Dead: 3}, Groups: groupCounts{{Name: "x"}}}
	plainKept := plainSummaryRow(kept)
	plainKept.Children, plainKept.Groups = &Children{Dead: 3}, groupCounts{{Name: "x"}}
	sameRowDecoding(t, data, &kept, &plainKept)
}

// rowSamples are encoded rows of every kind, with every field set and
// none.
func rowSamples(t testing.TB) [][]byte {
	job := events.JobRegistered{Job: events.Job{ID: "web", Namespace: "ns", ParentID: "p", Stop: true, Dispatched: true,
		Periodic: &events.PeriodicConfig{Enabled: true, Spec: "* * * * *"}, ParameterizedJob: &events.ParameterizedJob{Payload: "optional"},
		TaskGroups: []events.TaskGroup{{Name: "web", Count: 2}}}}
	var out [][]byte
	for _, v := range []any{
		&allocRef{Namespace: "ns", JobID: "web", Group: "g", ClientStatus: "running", JobCreateIndex: 1 << 40}, &allocRef{},
		&summaryRow{Groups: groupCounts{{"a", TaskGroupSummary{Queued: 1, Complete: 2, Failed: 3, Running: 4, Starting: 5, Lost: 6, Unknown: -7}},
			{"b", TaskGroupSummary{}}}, Children: &Children{Pending: 1, Running: 2, Dead: 3}, Status: "running", JobCreateIndex: 9},
		&summaryRow{}, &job, &events.JobRegistered{},
	} {
		b, err := events.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestRowDecoders: each row, with every field set and none, decodes
// through its own decoder as reflection decodes it, as each kind of row
// (fields of another kind skipped), and into a row already set.
func TestRowDecoders(t *testing.T) {
	for _, data := range rowSamples(t) {
		sameRowsDecoding(t, data)
	}
	// A row's own decoder takes its plain form.
	for _, c := range []struct {
		v    events.FieldDecoder
		data []byte
	}{{new(allocRef), rowSamples(t)[0]}, {new(summaryRow), rowSamples(t)[2]}, {new(jobHead), rowSamples(t)[4]}} {
		if !events.ReadFields(c.data, c.v) {
			t.Errorf("%T did not decode its own row", c.v)
		}
	}
}

func FuzzRowDecoders(f *testing.F) {
	for _, data := range rowSamples(f) {
		f.Add(data)
	}
	f.Add([]byte{0x81, 0xa1, 'g', 0x82, 0xa1, 'b', 0xc0, 0xa1, 'a', 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		if events.CheckStructure(data) == nil { // what reflection could be handed
			sameRowsDecoding(t, data)
		}
	})
}
