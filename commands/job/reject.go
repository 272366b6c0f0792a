package job

import (
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/schedconfig"
)

// ErrRegistrationRejected refuses a registration while the scheduler
// configuration sets RejectJobRegistration (403, as Nomad's).
var ErrRegistrationRejected = &commands.ForbiddenError{Reason: "job registration, dispatch, and scale are disabled " +
	"by the scheduler configuration (RejectJobRegistration); a management token may still register"}

// rejectRegistration refuses a registration by a caller without a
// management token while the scheduler configuration rejects them. With
// ACLs disabled no caller holds one, so every registration is refused,
// as Nomad documents.
func rejectRegistration(v projections.View, management bool) error {
	if management {
		return nil
	}
	c, err := schedconfig.Get(v)
	if err != nil {
		return err
	}
	if c.RejectJobRegistration {
		return ErrRegistrationRejected
	}
	return nil
}
