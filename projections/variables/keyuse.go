package variables

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// NoneUnderKeyOp is the precondition operation that holds at apply when
// no variable is encrypted with the root key named by the precondition's
// Key: a root key is removed only then, or the variables under it could
// never be read again.
const NoneUnderKeyOp events.PreconditionOp = "variables-none-under-key"

// NoneUnderKeyPrecondition is the precondition a root key's removal
// carries.
func NoneUnderKeyPrecondition(keyID string) events.Precondition {
	return events.Precondition{Table: ByKeyTable, Key: keyID, Op: NoneUnderKeyOp}
}

// CountUnderKey returns how many variables are encrypted with keyID,
// counting at most limit (0: all).
func CountUnderKey(v projections.View, keyID string, limit int) (int, error) {
	n := 0
	errEnough := errors.New("enough")
	err := ByKey(v, keyID, func(string, string) error {
		if n++; limit > 0 && n >= limit {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return 0, err
	}
	return n, nil
}

func init() {
	projections.RegisterCheck(NoneUnderKeyOp, func(v projections.View, p events.Precondition) string {
		n, err := CountUnderKey(v, p.Key, 1)
		if err != nil {
			return fmt.Sprintf("count variables under root key %s: %v", p.Key, err)
		}
		if n > 0 {
			return "variables are still encrypted with root key " + p.Key
		}
		return ""
	})
}
