package testagent

import (
	"context"
	"sync"
	"testing"
)

// Run calls run on a goroutine of its own with a context that stop
// cancels. stop then waits for run to return and reports its error on t,
// naming what; it runs when the test ends too, and only once.
func Run(t testing.TB, what string, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: %v", what, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
