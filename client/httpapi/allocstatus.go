package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// allocStatus is GET /v1/client/allocation/{alloc_id}: the allocation as
// this client holds it — what it reports to the servers (ID,
// ClientStatus, ClientDescription, TaskStates with each task's latest
// events, DeploymentStatus). It answers for an allocation the servers no
// longer list too, while the client kills its tasks: its task events say
// so, and the servers have no record left to show them.
func (s *Server) allocStatus(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("alloc_id")
	a, ok := s.cfg.Allocs.Alloc(id)
	if !ok {
		writeError(w, &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("allocation %q not found on this client", id)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(a.Status()); err != nil {
		s.log.Debug("write allocation status", "alloc_id", id, "err", err)
	}
}
