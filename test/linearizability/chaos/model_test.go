package chaos

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// step1 is an operation's input and output.
type step1 struct {
	in  Input
	out Output
}

// op builds an operation of client c on key "var:x" from call to ret
// (ret < 0: unknown outcome, at the end of the history).
func op(c int, call, ret int64, s step1) porcupine.Operation {
	s.in.Key = "var:x"
	if ret < 0 {
		s.out = Output{Unknown: true}
		ret = 1000
	}
	return porcupine.Operation{ClientId: c, Input: s.in, Call: call, Output: s.out, Return: ret}
}

func rd(v string, i uint64) step1 { return step1{Input{Kind: OpRead}, Output{Value: v, Index: i}} }
func w(v string, i uint64) step1  { return step1{Input{Kind: OpWrite, Value: v}, Output{Index: i}} }
func cas(expect uint64, v string, i uint64) step1 {
	return step1{Input{Kind: OpCAS, Value: v, Expect: expect}, Output{Index: i}}
}
func casConflict(expect uint64, v, cur string, curIndex uint64) step1 {
	return step1{Input{Kind: OpCAS, Value: v, Expect: expect}, Output{Conflict: true, Current: true, Value: cur, Index: curIndex}}
}
func jobConflict(expect uint64, v string, curIndex uint64) step1 {
	return step1{Input{Kind: OpCAS, Value: v, Expect: expect}, Output{Conflict: true, CurrentIndex: true, Index: curIndex}}
}

// TestModel holds the model to what linearizability allows and refuses:
// every Illegal row is a history ordo produced before issue 31's fixes or
// one the suite must catch.
func TestModel(t *testing.T) {
	type row struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}
	mk := op
	rows := []row{
		{"sequential", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(0, 2, 3, rd("a", 5)), mk(1, 4, 5, cas(5, "b", 7)), mk(0, 6, 7, rd("b", 7)),
		}, porcupine.Ok},
		{"read concurrent with a write sees either", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, 10, w("b", 8)), mk(2, 3, 4, rd("a", 5)), mk(3, 5, 6, rd("b", 8)),
		}, porcupine.Ok},
		{"stale read after a newer read", []porcupine.Operation{ // issue 31, 1
			mk(0, 0, 1, w("a", 6249)), mk(0, 2, 3, w("b", 6254)), mk(1, 4, 5, rd("b", 6254)), mk(2, 16, 30, rd("a", 6249)),
		}, porcupine.Illegal},
		{"two writes answered one index", []porcupine.Operation{ // issue 31, 2
			mk(0, 0, 10, w("a", 56)), mk(1, 1, 11, cas(50, "b", 56)),
		}, porcupine.Illegal},
		{"conflict naming an empty variable that exists", []porcupine.Operation{ // issue 31, 1
			mk(0, 0, 1, w("a", 5)), mk(1, 2, 3, casConflict(4, "b", "", 0)),
		}, porcupine.Illegal},
		{"cas on a replaced index succeeds: a lost update", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, 3, w("b", 7)), mk(2, 4, 5, cas(5, "c", 9)),
		}, porcupine.Illegal},
		{"unknown write seen by a read", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, -1, w("u", 0)), mk(2, 3, 4, rd("u", 6)), mk(3, 5, 6, cas(6, "c", 8)),
		}, porcupine.Ok},
		{"unknown write never seen", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, -1, w("u", 0)), mk(2, 3, 4, rd("a", 5)), mk(3, 5, 6, w("c", 9)),
		}, porcupine.Ok},
		{"unknown write seen, then the value before it", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, -1, w("u", 0)), mk(2, 3, 4, rd("u", 6)), mk(3, 5, 6, rd("a", 5)),
		}, porcupine.Illegal},
		{"read of a write not yet called", []porcupine.Operation{
			mk(0, 0, 1, rd("u", 6)), mk(1, 2, -1, w("u", 0)),
		}, porcupine.Illegal},
		{"job conflict naming the current index", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, 3, jobConflict(3, "b", 5)),
		}, porcupine.Ok},
		{"job conflict naming the index of an unknown write nothing showed", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(1, 2, -1, w("u", 0)), mk(2, 3, 4, jobConflict(5, "c", 6)), mk(3, 5, 6, w("d", 8)),
			mk(2, 7, 8, rd("d", 8)),
		}, porcupine.Ok},
		{"job conflict naming an index no write can have", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(2, 3, 4, jobConflict(5, "c", 6)), mk(1, 5, -1, w("u", 0)),
		}, porcupine.Illegal},
		{"job conflict naming an old index", []porcupine.Operation{
			mk(0, 0, 1, w("a", 5)), mk(0, 2, 3, w("b", 7)), mk(1, 4, 5, jobConflict(3, "c", 5)),
		}, porcupine.Illegal},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			hist, _, _ := resolve(r.ops)
			got := porcupine.CheckOperationsTimeout(Model(), hist, 10*time.Second)
			if got != r.want {
				t.Errorf("%s, want %s", got, r.want)
			}
		})
	}
}

// TestResolve checks what resolve does with unknown writes: applied when
// seen, left out when not, kept when a 409 names an index nothing explains.
func TestResolve(t *testing.T) {
	ops := []porcupine.Operation{op(0, 0, 1, w("a", 5)), op(1, 2, -1, w("u", 0)), op(2, 2, -1, w("v", 0)), op(3, 3, 4, rd("u", 6))}
	hist, applied, dropped := resolve(ops)
	if applied != 1 || dropped != 1 || len(hist) != 3 {
		t.Fatalf("applied %d dropped %d, %d left; want 1, 1, 3", applied, dropped, len(hist))
	}
	if got := hist[1].Output.(Output); got.Unknown || got.Index != 6 {
		t.Errorf("the seen write became %+v, want applied at 6", got)
	}

	// A job's 409 naming an index no answer shows: a write nothing showed
	// took effect there.
	hist, applied, _ = resolve(append(ops, op(4, 5, 6, jobConflict(5, "w", 9))))
	if applied != 2 || len(hist) != 5 {
		t.Fatalf("with a 409 at an unexplained index: applied %d, %d left; want 2, 5", applied, len(hist))
	}
	if ph := hist[4]; ph.Output.(Output).Index != 9 || ph.Call != 2 || ph.Input.(Input).Kind != OpWrite {
		t.Errorf("the write the 409 saw is %+v, want a write at 9 called at 2", ph)
	}
}

// TestCurrentJobIndex reads the index a job's 409 names, refused when
// decided or at apply.
func TestCurrentJobIndex(t *testing.T) {
	for _, tc := range []struct {
		body string
		want uint64
		ok   bool
	}{
		{`{"Error":"conflict: jobs/default\u0000j modify-index: enforcing job modify index 31: job exists with job modify index 35"}`, 35, true},
		{`{"Error":"conflict: jobs/default\u0000j modify-index: enforcing job modify index 31: job does not exist"}`, 0, true},
		{`{"Error":"conflict: jobs/default\u0000j modify-index: modify index is 35, not 31","Status":409}`, 35, true},
		{`{"Error":"conflict: something else"}`, 0, false},
	} {
		got, ok := currentJobIndex([]byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d %t, want %d %t", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
