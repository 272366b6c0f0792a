package mirror

import "errors"

var (
	// ErrForeignRecord marks a record in the topic that the mirror did not
	// write (no ordo-index/ordo-seq headers).
	ErrForeignRecord = errors.New("mirror: record not written by the ordo mirror")
	// ErrDisabled is returned by calls that need a configured mirror.
	ErrDisabled = errors.New("mirror: not configured")
)

// SettingsError names the setting of the mirror block that is wrong.
type SettingsError struct {
	// Field is the setting's name in the agent file, such as "mirror.format".
	Field  string
	Reason string
}

func (e *SettingsError) Error() string { return e.Field + ": " + e.Reason }
