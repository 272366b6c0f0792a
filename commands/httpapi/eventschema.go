package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

// eventSchemaRoutes serves the event schemas of this server's registry
// (events/schema), local to the server: GET /v1/events/schema lists the
// types, /v1/events/schema/{type}?version=N is one type's JSON Schema, and
// /v1/events/schema/_record the schema of the record around a payload.
func (s *Server) eventSchemaRoutes() {
	s.handle("GET /v1/events/schema", endpoint(listEventTypes))
	s.handle("GET /v1/events/schema/{type}", endpoint(getEventSchema))
}

// recordSchemaName names the record (envelope) schema among the types; no
// event type starts with an underscore.
const recordSchemaName = "_record"

func listEventTypes(w http.ResponseWriter, _ *http.Request) error {
	entries, err := schema.List()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}

func getEventSchema(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("type")
	if name == recordSchemaName {
		writeJSON(w, http.StatusOK, schema.Envelope())
		return nil
	}
	var version uint16
	if v := r.URL.Query().Get("version"); v != "" {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil || n == 0 {
			return commands.Invalid("version", "%q is not a version (1, 2, …)", v)
		}
		version = uint16(n)
	}
	sch, err := schema.Lookup(name, version)
	switch {
	case errors.Is(err, events.ErrUnknownType):
		return &commands.NotFoundError{Kind: "event type", ID: name}
	case errors.Is(err, schema.ErrUnknownVersion):
		return commands.Invalid("version", "%v", err)
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, sch)
	return nil
}
