package eventstest

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// SampleJob returns a job with every field set, for samples and tests. Its
// maps hold one key each, so their encoding does not depend on map order
// even where a test encodes without sorting.
func SampleJob() events.Job {
	return events.Job{
		ID: "web", Name: "web", Namespace: "payments", Type: events.JobTypeBatch, Priority: 70,
		Datacenters: []string{"dc1", "dc2"},
		NodePool:    "default",
		Constraints: []events.Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
			{Operand: events.ConstraintDistinctHosts, RTarget: "true"},
		},
		Meta: map[string]string{"owner": "team-pay"},
		Periodic: &events.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *", Specs: []string{"0 1 * * *"},
			SpecType: "cron", ProhibitOverlap: true, TimeZone: "Europe/Paris"},
		ParameterizedJob: &events.ParameterizedJob{Payload: "optional", MetaRequired: []string{"day"}, MetaOptional: []string{"note"}},
		Update: &events.UpdateStrategy{Stagger: 30 * time.Second, MaxParallel: 2, HealthCheck: "checks",
			MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute,
			AutoRevert: true, AutoPromote: true, Canary: 1},
		TaskGroups: []events.TaskGroup{{
			Name: "api", Count: 3,
			Constraints:         []events.Constraint{{LTarget: "${node.class}", RTarget: "large", Operand: "="}},
			RestartPolicy:       &events.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "fail"},
			ReschedulePolicy:    &events.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: "exponential", MaxDelay: time.Hour, Unlimited: true},
			Disconnect:          &events.Disconnect{LostAfter: time.Hour, Replace: true, Reconcile: "keep_original"},
			MaxClientDisconnect: 2 * time.Hour,
			Update:              &events.UpdateStrategy{MaxParallel: 1, MinHealthyTime: time.Second},
			Meta:                map[string]string{"tier": "1"},
			Tasks: []events.Task{{
				Name: "server", Driver: "exec",
				Config: events.TaskConfig{"args": []any{"1000", int64(2), 2.5, true, nil,
					map[string]any{"nested": int64(-7)}}},
				Env:           map[string]string{"PORT": "8080"},
				Resources:     &events.Resources{CPU: 100, MemoryMB: 64, DiskMB: 10},
				ShutdownDelay: 5 * time.Second, KillTimeout: 10 * time.Second,
				Meta: map[string]string{"role": "frontend"}, KillSignal: "SIGINT",
				Services: []events.Service{{Name: "${TASK}-admin", PortLabel: "admin", Provider: events.ServiceProviderNomad}},
				Templates: []events.Template{{DestPath: "local/app.env", EmbeddedTmpl: "PORT={{ env \"NOMAD_PORT_http\" }}",
					ChangeMode: events.TemplateChangeSignal, ChangeSignal: "SIGHUP", Splay: time.Second, Perms: "0600",
					Envvars: true, ChangeScript: &events.ChangeScript{Command: "/bin/true", Timeout: time.Second}}},
			}},
			Migrate: &events.MigrateStrategy{MaxParallel: 2, HealthCheck: "task_states",
				MinHealthyTime: 5 * time.Second, HealthyDeadline: 2 * time.Minute},
			Networks: []events.NetworkResource{{Mode: events.NetworkModeHost,
				ReservedPorts: []events.Port{{Label: "admin", Value: 9000}},
				DynamicPorts:  []events.Port{{Label: "http", To: 8080, HostNetwork: "public"}}}},
			Services: []events.Service{{Name: "web", PortLabel: "http", Tags: []string{"v1"}, Meta: map[string]string{"a": "b"},
				Checks: []events.ServiceCheck{{Type: events.CheckTypeHTTP, Path: "/health", Interval: 10 * time.Second,
					Timeout: 2 * time.Second, Header: map[string][]string{"X-A": {"1"}, "B": {"2", "3"}},
					CheckRestart: &events.CheckRestart{Limit: 3, Grace: 5 * time.Second}}}}},
		}},
		Version: 3, Stop: true, SubmitTime: 1_700_000_000_000_000_000, Stable: true,
		ParentID: "web-parent", Dispatched: true, Payload: []byte("input"),
	}
}
