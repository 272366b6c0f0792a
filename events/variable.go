package events

// KindVariable is the entity kind of a variable; its value is the
// variable's path (the namespace is the event's KindNamespace key).
const KindVariable = "variable"

// VariableUpserted records a variable created or replaced. It carries the
// variable's items only as ciphertext: the HTTP edge encrypted them with
// the active root key (AES-256-GCM, bound to the namespace and path) before
// the command was proposed, so no clear value is ever in the log. The
// create and modify indexes and times are the envelope's (index, leader
// time); the variables projection records them.
type VariableUpserted struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	Path      string `msgpack:"path" json:"Path"`
	// KeyID names the root key the items were encrypted with.
	KeyID string `msgpack:"kid" json:"KeyID"`
	// Data is the encrypted items (nonce and AES-GCM sealed JSON object).
	Data []byte `msgpack:"data" json:"Data"`
}

// Size is what the variable counts against its namespace's usage and
// quota: the bytes of its encrypted data (N13).
func (p *VariableUpserted) Size() int64 { return int64(len(p.Data)) }

// EntityKeys implements Payload.
func (p *VariableUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindVariable, Value: p.Path}}
}

// VariableDeleted records a variable removed.
type VariableDeleted struct {
	Namespace string `msgpack:"ns" json:"Namespace"`
	Path      string `msgpack:"path" json:"Path"`
}

// EntityKeys implements Payload.
func (p *VariableDeleted) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace}, {Kind: KindVariable, Value: p.Path}}
}

func init() {
	// Data is ciphertext, but it is redacted from the event stream and the
	// Kafka mirror all the same: nothing outside the cluster needs it.
	Register(Type{Name: "VariableUpserted", Version: 1, Topic: "Variable",
		New:       func() Payload { return new(VariableUpserted) },
		Sensitive: []string{"Data"}})
	Register(Type{Name: "VariableDeleted", Version: 1, Topic: "Variable",
		New: func() Payload { return new(VariableDeleted) }})
}
