package csi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	api "github.com/ordoplane/ordo/commands/csi"
)

// Handler serves the client's CSI API to the servers: node detach
// (unpublish and unstage), controller detach, create and delete.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathNodeDetach, volumeCall(m.Unpublish))
	mux.HandleFunc("POST "+api.PathControllerDetach, volumeCall(m.ControllerUnpublish))
	mux.HandleFunc("POST "+api.PathControllerDelete, volumeCall(m.Delete))
	mux.HandleFunc("POST "+api.PathControllerCreate, func(w http.ResponseWriter, r *http.Request) {
		var req api.CreateRequest
		if !decode(w, r, &req) {
			return
		}
		out, err := m.Create(r.Context(), req)
		reply(w, out, err)
	})
	return mux
}

// volumeCall serves a call that takes a volume request and answers an
// empty object or an error.
func volumeCall(call func(context.Context, api.VolumeRequest) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req api.VolumeRequest
		if !decode(w, r, &req) {
			return
		}
		reply(w, nil, call(r.Context(), req))
	}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"Error": "body: " + err.Error(), "Status": http.StatusBadRequest})
		return false
	}
	return true
}

func reply(w http.ResponseWriter, out any, err error) {
	switch {
	case errors.Is(err, ErrNoPlugin):
		writeJSON(w, http.StatusNotFound, map[string]any{"Error": err.Error(), "Status": http.StatusNotFound})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]any{"Error": err.Error(), "Status": http.StatusInternalServerError})
	case out == nil:
		writeJSON(w, http.StatusOK, map[string]any{})
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
