package namespace

import (
	"regexp"

	"github.com/ordoplane/ordo/commands"
)

// validName is Nomad's rule: letters, digits and dashes, 1–128 characters.
var validName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// MaxDescription is the longest description accepted, in bytes.
const MaxDescription = 256

// ValidName reports whether name may name a namespace, as a *commands.ValidationError.
func ValidName(field, name string) error {
	if !validName.MatchString(name) {
		return commands.Invalid(field, "%q must be 1-128 letters, digits or dashes", name)
	}
	return nil
}
