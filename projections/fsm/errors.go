package fsm

import (
	"fmt"

	"github.com/ordoplane/ordo/events"
)

// RejectedError is an entry's result when a precondition failed at apply:
// nothing but the rejection was recorded.
type RejectedError struct {
	Precondition events.Precondition
	Reason       string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("precondition failed: %s %s/%s: %s", e.Precondition.Op, e.Precondition.Table, e.Precondition.Key, e.Reason)
}
