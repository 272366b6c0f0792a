package broker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordoplane/ordo/events"
)

func newBroker(t *testing.T) *Broker {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NackTimeout = 5 * time.Second
	cfg.DeliveryLimit = 2
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	return b
}

func eval(id, job string, prio int) *events.Evaluation {
	return &events.Evaluation{ID: id, Namespace: "default", JobID: job, Priority: prio,
		Type: events.JobTypeService, Status: events.EvalStatusPending}
}

// try dequeues without waiting for more evals to arrive.
func try(t *testing.T, b *Broker) (*events.Evaluation, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	ev, tok, err := b.Dequeue(ctx, []string{events.JobTypeService, events.JobTypeBatch})
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return ev, tok
}

func TestPriorityThenArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		now := time.Now()
		b.Enqueue(eval("a", "j1", 50), now)
		b.Enqueue(eval("b", "j2", 70), now)
		b.Enqueue(eval("c", "j3", 50), now)
		var got []string
		for range 3 {
			ev, tok := try(t, b)
			got = append(got, ev.ID)
			if err := b.Ack(ev.ID, tok); err != nil {
				t.Fatal(err)
			}
		}
		if want := "b a c"; got[0]+" "+got[1]+" "+got[2] != want {
			t.Fatalf("order %v, want %s", got, want)
		}
	})
}

func TestOneEvalPerJobInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		now := time.Now()
		b.Enqueue(eval("e1", "web", 50), now)
		b.Enqueue(eval("e2", "web", 90), now)
		ev, tok := try(t, b)
		if ev.ID != "e1" {
			t.Fatalf("first %s", ev.ID)
		}
		if ev2, _ := try(t, b); ev2 != nil {
			t.Fatalf("second eval of the job delivered while the first is in flight: %s", ev2.ID)
		}
		if s := b.Stats(); s.Waiting != 1 || s.Unacked != 1 {
			t.Fatalf("stats %+v", s)
		}
		if err := b.Ack("e1", tok); err != nil {
			t.Fatal(err)
		}
		if ev2, _ := try(t, b); ev2 == nil || ev2.ID != "e2" {
			t.Fatalf("after ack got %v", ev2)
		}
	})
}

func TestNackRedeliversThenFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		b.Enqueue(eval("e1", "web", 50), time.Now())
		b.Enqueue(eval("e2", "web", 50), time.Now())
		ev, tok := try(t, b)
		if err := b.Nack(ev.ID, tok); err != nil {
			t.Fatal(err)
		}
		if again, _ := try(t, b); again != nil {
			t.Fatal("nacked eval redelivered before its delay")
		}
		time.Sleep(b.cfg.InitialNackDelay)
		synctest.Wait()
		ev, tok = try(t, b)
		if ev == nil || ev.ID != "e1" {
			t.Fatalf("redelivery = %v", ev)
		}
		// The second delivery reaches the limit: a nack fails the eval and
		// releases the job's next eval.
		if err := b.Nack(ev.ID, tok); err != nil {
			t.Fatal(err)
		}
		failed := b.DequeueFailed()
		if len(failed) != 1 || failed[0].ID != "e1" {
			t.Fatalf("failed = %v", failed)
		}
		if next, _ := try(t, b); next == nil || next.ID != "e2" {
			t.Fatalf("after failure got %v", next)
		}
	})
}

func TestNackTimeoutRedelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		b.Enqueue(eval("e1", "web", 50), time.Now())
		_, tok := try(t, b)
		time.Sleep(b.cfg.NackTimeout + b.cfg.InitialNackDelay)
		synctest.Wait()
		ev, _ := try(t, b)
		if ev == nil || ev.ID != "e1" {
			t.Fatalf("unacked eval not redelivered: %v", ev)
		}
		if err := b.Ack("e1", tok); !errors.Is(err, ErrNotOutstanding) {
			t.Fatalf("ack with the stale token: %v", err)
		}
	})
}

func TestWaitUntilHoldsEval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		ev := eval("later", "web", 50)
		ev.WaitUntil = time.Now().Add(30 * time.Second).UnixNano()
		b.Enqueue(ev, time.Now())
		if got, _ := try(t, b); got != nil {
			t.Fatal("delayed eval delivered early")
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got, _ := try(t, b); got == nil {
			t.Fatal("delayed eval not delivered after its wait")
		}
	})
}

func TestDisableDropsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		b.Enqueue(eval("e1", "web", 50), time.Now())
		b.Enqueue(eval("e2", "api", 50), time.Now())
		try(t, b)
		b.SetEnabled(false)
		if s := b.Stats(); s != (Stats{}) {
			t.Fatalf("stats after disable %+v", s)
		}
		if _, _, err := b.Dequeue(context.Background(), []string{events.JobTypeService}); !errors.Is(err, ErrDisabled) {
			t.Fatalf("dequeue while disabled: %v", err)
		}
		b.Enqueue(eval("e3", "web", 50), time.Now())
		if b.Stats().Ready != 0 {
			t.Fatal("a disabled broker took an eval")
		}
	})
}

func TestIgnoresNonPendingAndDuplicates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		blocked := eval("b", "web", 50)
		blocked.Status = events.EvalStatusBlocked
		b.Enqueue(blocked, time.Now())
		b.Enqueue(eval("e", "api", 50), time.Now())
		b.Enqueue(eval("e", "api", 50), time.Now())
		if s := b.Stats(); s.Ready != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestNackWaitWakesEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t)
		b.Enqueue(eval("e1", "web", 50), time.Now())
		ev, tok := try(t, b)
		early := make(chan struct{})
		if err := b.NackWait(ev.ID, tok, time.Hour, early); err != nil {
			t.Fatal(err)
		}
		if got, _ := try(t, b); got != nil {
			t.Fatal("redelivered before the state caught up")
		}
		close(early)
		synctest.Wait()
		got, tok := try(t, b)
		if got == nil || got.ID != "e1" {
			t.Fatalf("not redelivered when the state caught up: %v", got)
		}
		// Waiting for the state is not a failed delivery.
		if err := b.Nack(got.ID, tok); err != nil {
			t.Fatal(err)
		}
		if f := b.DequeueFailed(); len(f) != 0 {
			t.Fatalf("eval failed after one real delivery: %v", f)
		}
	})
}

// Deleted evals leave the broker: ready, waiting (behind their job's eval)
// and delayed ones are dropped, the next eval of a job whose turn was a
// dropped one becomes ready, and an eval a worker holds stays with it
// until it acks.
func TestRemoveDropsDeletedEvals(t *testing.T) {
	b := newBroker(t)
	held := eval("held", "h", 50)
	b.Enqueue(held, time.Now())
	got, tok := try(t, b)
	if got == nil || got.ID != "held" {
		t.Fatalf("dequeued %v, want held", got)
	}
	b.Enqueue(eval("first", "j", 50), time.Now())  // ready: j's turn
	b.Enqueue(eval("second", "j", 50), time.Now()) // waits behind first
	b.Enqueue(eval("third", "j", 50), time.Now())  // waits behind first
	b.Enqueue(eval("other", "k", 40), time.Now())
	later := eval("later", "l", 50)
	later.WaitUntil = time.Now().Add(time.Hour).UnixNano()
	b.Enqueue(later, time.Now())
	if s := b.Stats(); s.Ready != 2 || s.Waiting != 2 || s.Delayed != 1 || s.Unacked != 1 {
		t.Fatalf("stats before = %+v", s)
	}
	if n := b.Remove([]string{"first", "third", "later", "held", "missing"}); n != 3 {
		t.Fatalf("Remove dropped %d, want 3 (first, third, later)", n)
	}
	if s := b.Stats(); s.Ready != 2 || s.Waiting != 0 || s.Delayed != 0 || s.Unacked != 1 {
		t.Fatalf("stats after = %+v, want second and other ready, held unacked", s)
	}
	var ids []string
	for ev, _ := try(t, b); ev != nil; ev, _ = try(t, b) {
		ids = append(ids, ev.ID)
	}
	if len(ids) != 2 || ids[0] != "second" || ids[1] != "other" {
		t.Fatalf("dequeued %v, want [second other]", ids)
	}
	if err := b.Ack("held", tok); err != nil {
		t.Fatalf("ack of the held eval: %v", err)
	}
}
