package events

import (
	"encoding/json"
	"fmt"
)

// RedactedValue replaces a sensitive field's value.
const RedactedValue = "<redacted>"

// Redacted returns the event's current-version payload as a JSON object with
// every sensitive field of its type replaced by RedactedValue. It is the only
// form in which a payload leaves the cluster.
func Redacted(ev *Event) (map[string]any, error) {
	p, err := Decode(ev)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("json %s: %w", ev.Type, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("json %s: %w", ev.Type, err)
	}
	for _, f := range types[ev.Type].Sensitive {
		if _, ok := m[f]; ok {
			m[f] = RedactedValue
		}
	}
	return m, nil
}
