package httpapi_test

import (
	"io"

	"github.com/ordoplane/ordo/storage/kv"
)

// exporterFunc is a fake httpapi.Exporter.
type exporterFunc func(w io.Writer, src kv.Reader, from, to uint64, state bool) error

func (f exporterFunc) ExportHistory(w io.Writer, src kv.Reader, from, to uint64, state bool) error {
	return f(w, src, from, to, state)
}

// reschedulerFunc is a fake httpapi.Rescheduler.
type reschedulerFunc func(src kv.Reader, evalID string) (any, error)

func (f reschedulerFunc) Reschedule(src kv.Reader, evalID string) (any, error) { return f(src, evalID) }
