package events

// NamespaceUpsertedV1 is the frozen version 1 shape, for golden fixtures.
type NamespaceUpsertedV1 = namespaceUpsertedV1

// NamespaceUpsertedV2 is the frozen version 2 shape, for golden fixtures.
type NamespaceUpsertedV2 = namespaceUpsertedV2

// NamespaceV2 is Namespace in its frozen version 2 shape.
type NamespaceV2 = namespaceV2

// Unregister removes the type called name and its upcasters from the
// registry, so a test can register a throwaway type and clean up after it.
// It is not safe to call while other tests use the registry.
func Unregister(name string) {
	t, ok := types[name]
	if !ok {
		return
	}
	for rt, n := range payloadOf {
		if n == t.Name {
			delete(payloadOf, rt)
		}
	}
	delete(types, name)
	delete(upcasters, name)
}
