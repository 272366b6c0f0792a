package jobspec

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// ParseJSON reads a job in Nomad's API JSON — the {"Job": {...}} body that
// /v1/jobs takes, or a bare job — reading at most limit bytes, and returns
// it canonical and validated. Fields ordo does not model are ignored, as
// Nomad's output (`nomad job run -output`) carries many. Errors are
// *commands.ValidationError (or *commands.TooLargeError).
func ParseJSON(r io.Reader, limit int64) (*events.Job, error) {
	var raw json.RawMessage
	if err := commands.DecodeJSON(r, limit, &raw); err != nil {
		return nil, err
	}
	body := []byte(raw)
	var wrapper map[string]json.RawMessage
	if err := json.Unmarshal(body, &wrapper); err != nil {
		return nil, commands.Invalid("body", "expected a JSON object")
	}
	if inner, ok := wrapper["Job"]; ok {
		if bytes.Equal(bytes.TrimSpace(inner), []byte("null")) {
			return nil, commands.Invalid("Job", "missing")
		}
		body = inner
	}
	var s spec
	if err := commands.DecodeJSON(bytes.NewReader(body), int64(len(body)), &s); err != nil {
		return nil, err
	}
	if err := checkSpec(&s); err != nil {
		return nil, err
	}
	job := canonicalize(&s)
	if err := Validate(job); err != nil {
		return nil, err
	}
	return job, nil
}
