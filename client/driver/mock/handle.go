package mock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/clock"
)

// sigkill is SIGKILL's number.
const sigkill = 9

// errExited is returned when signalling a task that has exited.
var errExited = errors.New("mock: task has exited")

// handle is a simulated task, played by its run goroutine.
type handle struct {
	d       *Driver
	id      string
	started time.Time
	s       spec
	// signals carries signals to run.
	signals chan int
	// done is closed, result set, when the task has exited.
	done   chan struct{}
	result driver.ExitResult
}

var _ driver.Handle = (*handle)(nil)

func newHandle(d *Driver, id string, started time.Time, s spec) *handle {
	return &handle{d: d, id: id, started: started, s: s, signals: make(chan int), done: make(chan struct{})}
}

// Wait implements driver.Handle.
func (h *handle) Wait(ctx context.Context) (driver.ExitResult, error) {
	res, err := driver.WaitExit(ctx, h.done, &h.result)
	if err != nil {
		return res, fmt.Errorf("mock: wait for task %s: %w", h.id, err)
	}
	return res, nil
}

// Signal implements driver.Handle: SIGKILL ends the task at once, its kill
// signal ends it kill_after later, any other signal is ignored.
func (h *handle) Signal(sig string) error {
	n, err := driver.ParseSignal(sig)
	if err != nil {
		return fmt.Errorf("mock: signal task %s: %w", h.id, err)
	}
	if err := h.send(n); err != nil {
		return fmt.Errorf("mock: signal task %s: %w", h.id, err)
	}
	return nil
}

// Stop implements driver.Handle.
func (h *handle) Stop(ctx context.Context) error {
	if err := h.send(h.s.killSignal); errors.Is(err, errExited) {
		return nil
	}
	timer := h.d.cfg.Clock.NewTimer(h.s.killTimeout)
	defer timer.Stop()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mock: stop task %s: %w", h.id, ctx.Err())
	case <-timer.C():
	}
	_ = h.send(sigkill)
	<-h.done // run ends as soon as it takes SIGKILL
	return nil
}

// State implements driver.Handle.
func (h *handle) State() driver.HandleState { return h.s.state(h.id, h.started) }

// send hands sig to the task; errExited once it has exited.
func (h *handle) send(sig int) error {
	select {
	case h.signals <- sig:
		return nil
	case <-h.done:
		return errExited
	}
}

// run is the goroutine, one per task, that plays it: it writes its output
// (to out, which it closes; nil for none), takes its signals and ends it
// at started+run_for, on SIGKILL, or kill_after after its kill signal.
func (h *handle) run(out *os.File) {
	defer close(h.done)
	if out != nil {
		defer out.Close()
	}
	clk := h.d.cfg.Clock
	exit := clk.NewTimer(h.started.Add(h.s.runFor).Sub(clk.Now()))
	defer exit.Stop()

	var repeat clock.Timer
	var repeatC <-chan time.Time
	left := h.s.stdoutRepeat
	write := func() {
		if out != nil {
			// Output is best effort, like a process writing to a full disk.
			_, _ = io.WriteString(out, h.s.stdoutString)
		}
	}
	arm := func() {
		if left > 0 {
			left--
			repeat = clk.NewTimer(h.s.stdoutRepeatDuration)
			repeatC = repeat.C()
		} else {
			repeat, repeatC = nil, nil
		}
	}
	write()
	arm()
	defer func() {
		if repeat != nil {
			repeat.Stop()
		}
	}()

	var kill clock.Timer
	var killC <-chan time.Time
	defer func() {
		if kill != nil {
			kill.Stop()
		}
	}()
	signalled := func(sig int) driver.ExitResult { return driver.ExitResult{ExitCode: 128 + sig, Signal: sig} }
	for {
		select {
		case <-exit.C():
			h.result = driver.ExitResult{ExitCode: h.s.exitCode}
			return
		case <-repeatC:
			write()
			arm()
		case sig := <-h.signals:
			switch {
			case sig == sigkill:
				h.result = signalled(sigkill)
				return
			case sig != h.s.killSignal || kill != nil:
			case h.s.killAfter == 0:
				h.result = signalled(sig)
				return
			default:
				kill = clk.NewTimer(h.s.killAfter)
				killC = kill.C()
			}
		case <-killC:
			h.result = signalled(h.s.killSignal)
			return
		}
	}
}
