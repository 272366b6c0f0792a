package api

// SearchRequest is the body of PUT /v1/search (Nomad's
// api.SearchRequest): the ids starting with Prefix in Context ("all",
// "jobs", "allocs", "nodes", "evals", "deployments", "namespaces",
// "plugins", "volumes", "variables", "node_pools").
type SearchRequest struct {
	Prefix     string
	Context    string
	Namespace  string
	AllowStale bool
}

// SearchResponse is the answer of PUT /v1/search: the matching ids per
// context, at most 20 each, and whether each was cut short.
type SearchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
	Index       uint64
	KnownLeader bool
}

// FuzzySearchRequest is the body of PUT /v1/search/fuzzy (Nomad's
// api.FuzzySearchRequest): the names containing Text in Context.
type FuzzySearchRequest struct {
	Text      string
	Context   string
	Namespace string
}

// FuzzyMatch is one match of a fuzzy search: the matching name and the
// scope that finds it (namespace and job for a group or task).
type FuzzyMatch struct {
	ID    string
	Scope []string `json:",omitempty"`
}

// FuzzySearchResponse is the answer of PUT /v1/search/fuzzy.
type FuzzySearchResponse struct {
	Matches     map[string][]FuzzyMatch
	Truncations map[string]bool
	Index       uint64
	KnownLeader bool
}
