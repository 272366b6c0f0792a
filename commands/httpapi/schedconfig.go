package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	cmdsched "github.com/ordoplane/ordo/commands/schedconfig"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/schedconfig"
)

var schedConfigTables = []string{schedconfig.Table}

// schedulerConfigRoutes are Nomad's operator routes for the scheduler
// configuration and the autopilot's, both stored through the log (the
// autopilot's GET and health are in membership.go).
func (s *Server) schedulerConfigRoutes() {
	s.handle("GET /v1/operator/scheduler/configuration", s.leader(endpoint(s.getSchedulerConfig)))
	s.handle("PUT /v1/operator/scheduler/configuration", s.leader(endpoint(s.setSchedulerConfig)))
	s.handle("POST /v1/operator/scheduler/configuration", s.leader(endpoint(s.setSchedulerConfig)))
	s.handle("PUT /v1/operator/autopilot/configuration", s.leader(endpoint(s.setAutopilotConfiguration)))
	s.handle("POST /v1/operator/autopilot/configuration", s.leader(endpoint(s.setAutopilotConfiguration)))
}

// schedulerConfigShape is the configuration as Nomad's API shows it.
func schedulerConfigShape(c *schedconfig.Config) *api.SchedulerConfiguration {
	return &api.SchedulerConfiguration{SchedulerAlgorithm: c.Algorithm(),
		PreemptionConfig: api.PreemptionConfig{SystemSchedulerEnabled: c.PreemptSystem,
			SysBatchSchedulerEnabled: c.PreemptSysBatch, BatchSchedulerEnabled: c.PreemptBatch,
			ServiceSchedulerEnabled: c.PreemptService},
		MemoryOversubscriptionEnabled: c.MemoryOversubscription, RejectJobRegistration: c.RejectJobRegistration,
		PauseEvalBroker: c.PauseEvalBroker, CreateIndex: c.CreateIndex, ModifyIndex: c.ModifyIndex}
}

// getSchedulerConfig serves GET /v1/operator/scheduler/configuration:
// Nomad's SchedulerConfigurationResponse.
func (s *Server) getSchedulerConfig(w http.ResponseWriter, r *http.Request) error {
	s.query(w, r, schedConfigTables, func(v projections.View) (any, error) {
		c, err := schedconfig.Get(v)
		if err != nil {
			return nil, err
		}
		idx, _ := v.AppliedIndex()
		return api.SchedulerConfigurationResponse{SchedulerConfig: schedulerConfigShape(c), Index: idx, KnownLeader: true}, nil
	})
	return nil
}

// setSchedulerConfig serves PUT /v1/operator/scheduler/configuration;
// with ?cas=<modify index> it applies only if the configuration is still
// at that index, and answers Updated false (200) otherwise, as Nomad does.
func (s *Server) setSchedulerConfig(w http.ResponseWriter, r *http.Request) error {
	var body api.SchedulerConfiguration
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	cmd := cmdsched.Set{Config: events.SchedulerConfig{Algorithm: body.SchedulerAlgorithm,
		PreemptSystem: body.PreemptionConfig.SystemSchedulerEnabled, PreemptSysBatch: body.PreemptionConfig.SysBatchSchedulerEnabled,
		PreemptBatch: body.PreemptionConfig.BatchSchedulerEnabled, PreemptService: body.PreemptionConfig.ServiceSchedulerEnabled,
		MemoryOversubscription: body.MemoryOversubscriptionEnabled, RejectJobRegistration: body.RejectJobRegistration,
		PauseEvalBroker: body.PauseEvalBroker}}
	if r.URL.Query().Has("cas") {
		idx, err := parseUintParam(r, "cas", 0)
		if err != nil {
			return err
		}
		cmd.CAS, cmd.Index = true, idx
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "operator.scheduler.set", request(r), cmd)
	if _, ok := errors.AsType[*commands.ConflictError](err); ok && cmd.CAS {
		setIndex(w, s.cfg.FSM.Applied())
		writeJSON(w, http.StatusOK, api.SchedulerSetConfigurationResponse{Updated: false, Index: s.cfg.FSM.Applied()})
		return nil
	} else if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, api.SchedulerSetConfigurationResponse{Updated: true, Index: out.Index})
	return nil
}

// setAutopilotConfiguration serves PUT
// /v1/operator/autopilot/configuration: the settings go through the log,
// so every server holds them and they outlive the leader (the agent
// file's autopilot block is what servers use until one is set). It
// answers true, as Nomad's does.
func (s *Server) setAutopilotConfiguration(w http.ResponseWriter, r *http.Request) error {
	var body api.AutopilotConfiguration
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	cfg := events.AutopilotConfig{CleanupDeadServers: body.CleanupDeadServers, MaxTrailingLogs: body.MaxTrailingLogs,
		MinQuorum: body.MinQuorum}
	for _, f := range []struct {
		name, v string
		dst     *time.Duration
	}{
		{"LastContactThreshold", body.LastContactThreshold, &cfg.LastContactThreshold},
		{"ServerStabilizationTime", body.ServerStabilizationTime, &cfg.ServerStabilizationTime},
	} {
		if f.v == "" {
			continue
		}
		d, err := time.ParseDuration(f.v)
		if err != nil || d < 0 {
			return commands.Invalid(f.name, "%q is not a duration such as 10s", f.v)
		}
		*f.dst = d
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "operator.autopilot.set", request(r), cmdsched.SetAutopilot{Config: cfg})
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("autopilot configuration set", "config", fmt.Sprintf("%+v", cfg), "actor", actorOf(r), "index", out.Index)
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, true)
	return nil
}

// isManagement reports whether r's caller holds a management token;
// false with ACLs disabled.
func (s *Server) isManagement(r *http.Request) bool {
	if s.cfg.ACL == nil {
		return false
	}
	id := identityOf(r)
	return id != nil && id.ACL.IsManagement()
}
