package driver

import "context"

// WaitExit waits until done is closed and returns *res, which the closer
// set before closing done; if ctx ends first it returns ctx's error,
// unless the task exited at that moment too.
func WaitExit(ctx context.Context, done <-chan struct{}, res *ExitResult) (ExitResult, error) {
	select {
	case <-done:
		return *res, nil
	case <-ctx.Done():
		select {
		case <-done:
			return *res, nil
		default:
			return ExitResult{}, ctx.Err()
		}
	}
}
