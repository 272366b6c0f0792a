package api

// EvalDeleteRequest is the body of DELETE /v1/evaluations, Nomad's
// EvalDeleteRequest with ordo's paging fields: EvalIDs or Filter, not
// both. With Filter, PerPage is the page size of each entry (0: the
// server's default), NextToken resumes where a previous answer stopped,
// MaxPages (0: no limit) ends the request after that many pages, so a
// client can show progress (ordo eval delete -filter), and InFlight is
// how many pages may be appended and not yet applied (0: the server's
// default; docs/gc.md).
type EvalDeleteRequest struct {
	EvalIDs   []string
	Filter    string
	PerPage   int
	NextToken string
	MaxPages  int
	InFlight  int
}

// EvalDeleteResponse answers DELETE /v1/evaluations: how many evals were
// deleted, how many the filter selected but were not safe to delete, and
// where to resume ("" when the walk reached the end).
type EvalDeleteResponse struct {
	Count     int
	Skipped   int
	NextToken string
	Index     uint64
}
