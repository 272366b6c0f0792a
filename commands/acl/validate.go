package acl

import (
	"regexp"

	"github.com/ordoplane/ordo/commands"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// MaxDescription bounds descriptions, in bytes.
const MaxDescription = 256

// ValidName checks a policy or role name as Nomad does.
func ValidName(field, name string) error {
	if !validName.MatchString(name) {
		return commands.Invalid(field, "%q must be 1 to 128 letters, digits or dashes", name)
	}
	return nil
}

func validDescription(d string) error {
	if len(d) > MaxDescription {
		return commands.Invalid("Description", "%d bytes exceeds %d", len(d), MaxDescription)
	}
	return nil
}

// dedupe returns list without repeats, keeping first occurrences.
func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range list {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
