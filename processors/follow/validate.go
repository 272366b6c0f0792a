package follow

import (
	"fmt"
	"time"
)

// Validate reports a follower's Config that cannot work: pipeline and
// state are required, and retry (its wait after a failed command, zero
// when it has none) must not be negative. pkg names the processor in the
// error, as in "drainer: State is required".
func Validate(pkg string, pipeline Submitter, state State, retry time.Duration) error {
	switch {
	case pipeline == nil:
		return fmt.Errorf("%s: Pipeline is required", pkg)
	case state == nil:
		return fmt.Errorf("%s: State is required", pkg)
	case retry < 0:
		return fmt.Errorf("%s: RetryInterval must not be negative", pkg)
	}
	return nil
}
