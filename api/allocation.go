package api

// AllocationListStub is an allocation as the lists of GET /v1/allocations,
// /v1/job/<id>/allocations, /v1/evaluation/<id>/allocations and
// /v1/node/<id>/allocations show it (the fields the CLI reads).
type AllocationListStub struct {
	ID            string
	EvalID        string
	Name          string
	Namespace     string
	NodeID        string
	NodeName      string
	JobID         string
	JobVersion    uint64
	TaskGroup     string
	DesiredStatus string
	ClientStatus  string
	CreateIndex   uint64
	ModifyIndex   uint64
	CreateTime    int64
	ModifyTime    int64
}
