package schema

import "github.com/ordoplane/ordo/events"

// Entry summarises one registered event type for listings.
type Entry struct {
	// Type, Version (the current one) and Topic are the registration's.
	Type    string
	Version uint16
	Topic   string
	// Versions lists every version events of the type may have been written at.
	Versions []uint16
	// Sensitive lists the payload's sensitive fields (JSON names).
	Sensitive []string
	// Keys lists the kinds of entity key the type's events carry.
	Keys []string
}

// List returns an Entry for every registered type, sorted by name.
func List() ([]Entry, error) {
	var out []Entry
	for _, typ := range events.Types() {
		keys, err := KeyKinds(typ)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{
			Type: typ.Name, Version: typ.Version, Topic: typ.Topic, Versions: versions(typ),
			Sensitive: append([]string(nil), typ.Sensitive...), Keys: keys,
		})
	}
	return out, nil
}
