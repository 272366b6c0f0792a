package events

import "github.com/vmihailenco/msgpack/v5"

// Namespace is a namespace's user-settable fields as events carry them.
type Namespace struct {
	Name        string            `msgpack:"name" json:"Name"`
	Description string            `msgpack:"desc,omitempty" json:"Description"`
	Meta        map[string]string `msgpack:"meta,omitempty" json:"Meta"`
	// VariablesQuota bounds the bytes of encrypted variable data the
	// namespace may hold (N13); 0 is no limit. Added in version 3.
	VariablesQuota int64 `msgpack:"varquota,omitempty" json:"VariablesQuota"`
}

// NamespaceUpserted records a namespace created or updated (version 3).
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

// namespaceUpsertedV2 is the shape version 2 was written in, before
// namespaces carried VariablesQuota.
type namespaceUpsertedV2 struct {
	Namespace namespaceV2 `msgpack:"ns"`
}

// namespaceV2 is Namespace as version 2 carried it.
type namespaceV2 struct {
	Name        string            `msgpack:"name"`
	Description string            `msgpack:"desc,omitempty"`
	Meta        map[string]string `msgpack:"meta,omitempty"`
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
	Register(Type{Name: "NamespaceUpserted", Version: 3, Topic: "Namespace",
		New: func() Payload { return new(NamespaceUpserted) }})
	Register(Type{Name: "NamespaceDeleted", Version: 1, Topic: "Namespace",
		New: func() Payload { return new(NamespaceDeleted) }})
	RegisterUpcaster(Upcaster{Name: "NamespaceUpserted", From: 1, Up: upNamespaceUpsertedV1})
	RegisterUpcaster(Upcaster{Name: "NamespaceUpserted", From: 2, Up: upNamespaceUpsertedV2})
}

func upNamespaceUpsertedV1(old msgpack.RawMessage) (msgpack.RawMessage, error) {
	var v1 namespaceUpsertedV1
	if err := msgpack.Unmarshal(old, &v1); err != nil {
		return nil, err
	}
	// Version 2's shape: version 3 only adds an omitted-when-zero field.
	var v2 namespaceUpsertedV2
	v2.Namespace.Name, v2.Namespace.Description = v1.Name, v1.Description
	return Marshal(&v2)
}

// upNamespaceUpsertedV2 adds VariablesQuota, 0 (no limit).
func upNamespaceUpsertedV2(old msgpack.RawMessage) (msgpack.RawMessage, error) {
	var v2 namespaceUpsertedV2
	if err := msgpack.Unmarshal(old, &v2); err != nil {
		return nil, err
	}
	ns := v2.Namespace
	return Marshal(&NamespaceUpserted{Namespace: Namespace{Name: ns.Name, Description: ns.Description, Meta: ns.Meta}})
}
