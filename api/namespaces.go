package api

// Namespace is a namespace as GET /v1/namespace/:name answers it (Nomad's
// api.Namespace, with ordo's VariablesQuota).
type Namespace struct {
	Name        string
	Description string
	Meta        map[string]string
	// VariablesQuota is the bytes of encrypted variables the namespace
	// may hold, 0 for no limit (ordo's own).
	VariablesQuota int64
	CreateIndex    uint64
	ModifyIndex    uint64
}

// NamespaceRequest is the body of PUT /v1/namespace/:name; the name in
// the path wins when the body has none and must agree when it has one.
type NamespaceRequest struct {
	Name        string
	Description string
	Meta        map[string]string
	// VariablesQuota is ordo's own: the bytes of encrypted variables the
	// namespace may hold, 0 for no limit.
	VariablesQuota int64
}
