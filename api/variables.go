package api

// Variable is a variable as GET /v1/var/:path answers it (Nomad's
// api.Variable); lists and write answers leave Items out.
type Variable struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Items       map[string]string `json:",omitempty"`
}
