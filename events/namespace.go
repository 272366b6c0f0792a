package events

import "github.com/vmihailenco/msgpack/v5"

// Namespace is a namespace's user-settable fields as events carry them.
type Namespace struct {
	Name        string            `msgpack:"name" json:"Name"`
	Description string            `msgpack:"desc,omitempty" json:"Description"`
	Meta        map[string]string `msgpack:"meta,omitempty" json:"Meta"`
}

// NamespaceUpserted records a namespace created or updated (version 2).
type NamespaceUpserted struct {
	Namespace Namespace `msgpack:"ns" json:"Namespace"`
}

// EntityKeys implements Payload.
func (p *NamespaceUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Namespace.Name}}
}

// namespaceUpsertedV1 is the flat shape version 1 was written in, before
// namespaces carried Meta.
type namespaceUpsertedV1 struct {
	Name        string `msgpack:"name"`
	Description string `msgpack:"desc,omitempty"`
}

// NamespaceDeleted records a namespace removed.
type NamespaceDeleted struct {
	Name string `msgpack:"name" json:"Name"`
}

// EntityKeys implements Payload.
func (p *NamespaceDeleted) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Name}}
}

func init() {
	Register(Type{Name: "NamespaceUpserted", Version: 2, Topic: "Namespace",
		New: func() Payload { return new(NamespaceUpserted) }})
	Register(Type{Name: "NamespaceDeleted", Version: 1, Topic: "Namespace",
		New: func() Payload { return new(NamespaceDeleted) }})
	RegisterUpcaster(Upcaster{Name: "NamespaceUpserted", From: 1, Up: upNamespaceUpsertedV1})
}

func upNamespaceUpsertedV1(old msgpack.RawMessage) (msgpack.RawMessage, error) {
	var v1 namespaceUpsertedV1
	if err := msgpack.Unmarshal(old, &v1); err != nil {
		return nil, err
	}
	return Marshal(&NamespaceUpserted{Namespace: Namespace{Name: v1.Name, Description: v1.Description}})
}
