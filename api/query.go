package api

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// blockingMargin is added to a blocking query's wait for its request
// timeout: the server answers at the end of the wait plus its jitter.
const blockingMargin = 30 * time.Second

// Request is one call of the API.
type Request struct {
	// Method and Path are the HTTP method and the escaped path (Pathf).
	Method, Path string
	// Params are the query's parameters.
	Params url.Values
	// Query sets the namespace, region and blocking query parameters.
	Query *QueryOptions
	// Body is sent as JSON, or as it is when an io.Reader; nil sends none.
	Body any
	// Timeout bounds each attempt; 0 is the client's request timeout, or
	// for a blocking query its wait plus a margin.
	Timeout time.Duration
	// Token, when set, is sent as X-Nomad-Token instead of the client's
	// token (a workload identity reading for its task).
	Token string

	// stream, when set, receives the body of a successful answer unread.
	stream *io.ReadCloser
}

// QueryOptions are the query parameters Nomad's API shares across reads.
type QueryOptions struct {
	// Namespace and Region, when set, override the client's.
	Namespace, Region string
	// Index makes the query block until the state has moved past it.
	Index uint64
	// Wait bounds how long a blocking query waits; 0 is the server's
	// default (5m).
	Wait time.Duration
	// Stale lets any server answer from its own state.
	Stale bool
}

// QueryMeta is what an answer says about the state it was read from.
type QueryMeta struct {
	// LastIndex is the answer's X-Nomad-Index: the index to block on next.
	LastIndex uint64
	// NextToken is the answer's X-Nomad-NextToken: where the next page of
	// a list starts, empty on the last page.
	NextToken string
	// Header is the answer's headers.
	Header http.Header
}

func (q *QueryOptions) apply(v url.Values) {
	if q.Namespace != "" {
		v.Set("namespace", q.Namespace)
	}
	if q.Region != "" {
		v.Set("region", q.Region)
	}
	if q.Index > 0 {
		v.Set("index", strconv.FormatUint(q.Index, 10))
		if q.Wait > 0 {
			v.Set("wait", q.Wait.String())
		}
	}
	if q.Stale {
		v.Set("stale", "")
	}
}

// timeout is a blocking query's request timeout: its wait (or the
// server's default) plus the server's jitter and a margin.
func (q *QueryOptions) timeout() time.Duration {
	wait := q.Wait
	if wait <= 0 {
		wait = 5 * time.Minute
	}
	return wait + wait/16 + blockingMargin
}
