package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// newSchedulerConfigCommand is `ordo operator scheduler`: Nomad's
// get-config and set-config of the scheduler configuration.
func newSchedulerConfigCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Show or change the scheduler configuration",
	}
	get := &cobra.Command{
		Use:   "get-config",
		Short: "Show the scheduler configuration",
		Args:  cobra.NoArgs,
	}
	out := addOutputFlags(get)
	get.RunE = func(cmd *cobra.Command, _ []string) error {
		return showWith(cmd, g, "/v1/operator/scheduler/configuration", nil, "read the scheduler configuration", out,
			func(w io.Writer, r api.SchedulerConfigurationResponse) error {
				if r.SchedulerConfig == nil {
					return fmt.Errorf("read the scheduler configuration: the answer holds none")
				}
				return printSchedulerConfig(w, r.SchedulerConfig)
			})
	}
	cmd.AddCommand(get, newSchedulerSetConfigCommand(g))
	return cmd
}

// printSchedulerConfig writes the view of `ordo operator scheduler get-config`.
func printSchedulerConfig(w io.Writer, c *api.SchedulerConfiguration) error {
	b := strconv.FormatBool
	if err := printPairs(w, []pair{{"Scheduler Algorithm", c.SchedulerAlgorithm},
		{"Memory Oversubscription", b(c.MemoryOversubscriptionEnabled)},
		{"Reject Job Registration", b(c.RejectJobRegistration)}, {"Pause Eval Broker", b(c.PauseEvalBroker)}}); err != nil {
		return err
	}
	fmt.Fprintln(w)
	p := c.PreemptionConfig
	return printPairs(w, []pair{{"Preemption System Scheduler", b(p.SystemSchedulerEnabled)},
		{"Preemption Service Scheduler", b(p.ServiceSchedulerEnabled)},
		{"Preemption Batch Scheduler", b(p.BatchSchedulerEnabled)},
		{"Preemption SysBatch Scheduler", b(p.SysBatchSchedulerEnabled)}})
}

// boolFlag is a flag whose value is "true", "false" or unset, as Nomad's
// set-config flags: an unset flag keeps the current setting.
type boolFlag struct {
	set, v bool
}

func (f *boolFlag) String() string { return strconv.FormatBool(f.v) }
func (f *boolFlag) Type() string   { return "bool" }
func (f *boolFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
	}
	f.set, f.v = true, v
	return nil
}

// apply sets *dst when the flag was given.
func (f *boolFlag) apply(dst *bool) {
	if f.set {
		*dst = f.v
	}
}

func newSchedulerSetConfigCommand(g *globals) *cobra.Command {
	var (
		algorithm                                    string
		memOver, reject, pause                       boolFlag
		preemptSystem, preemptSysBatch, preemptBatch boolFlag
		preemptService                               boolFlag
		checkIndex                                   int64
	)
	cmd := &cobra.Command{
		Use:   "set-config [flags]",
		Short: "Change the scheduler configuration; flags left out keep their setting",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var cur api.SchedulerConfigurationResponse
			if err := c.Get(cmd.Context(), "/v1/operator/scheduler/configuration", nil, &cur); err != nil {
				return fmt.Errorf("read the scheduler configuration: %w", err)
			}
			conf := cur.SchedulerConfig
			if conf == nil {
				conf = &api.SchedulerConfiguration{}
			}
			if algorithm != "" {
				conf.SchedulerAlgorithm = algorithm
			}
			memOver.apply(&conf.MemoryOversubscriptionEnabled)
			reject.apply(&conf.RejectJobRegistration)
			pause.apply(&conf.PauseEvalBroker)
			preemptSystem.apply(&conf.PreemptionConfig.SystemSchedulerEnabled)
			preemptSysBatch.apply(&conf.PreemptionConfig.SysBatchSchedulerEnabled)
			preemptBatch.apply(&conf.PreemptionConfig.BatchSchedulerEnabled)
			preemptService.apply(&conf.PreemptionConfig.ServiceSchedulerEnabled)
			path := "/v1/operator/scheduler/configuration"
			if checkIndex >= 0 {
				path += "?" + url.Values{"cas": {strconv.FormatInt(checkIndex, 10)}}.Encode()
			}
			var res api.SchedulerSetConfigurationResponse
			if err := c.Put(cmd.Context(), path, conf, &res); err != nil {
				return fmt.Errorf("set the scheduler configuration: %w", err)
			}
			if checkIndex >= 0 && !res.Updated {
				return fmt.Errorf("scheduler configuration not updated: it changed since index %d", checkIndex)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "Scheduler configuration updated!")
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&algorithm, "scheduler-algorithm", "", "binpack (fill the fullest node) or spread (the emptiest)")
	f.Var(&memOver, "memory-oversubscription", "let tasks set memory_max above memory (true or false)")
	f.Var(&reject, "reject-job-registration", "refuse job registrations but a management token's (true or false)")
	f.Var(&pause, "pause-eval-broker", "stop handing evaluations to the schedulers (true or false)")
	f.Var(&preemptSystem, "preempt-system-scheduler", "let system jobs preempt (true or false)")
	f.Var(&preemptSysBatch, "preempt-sysbatch-scheduler", "let sysbatch jobs preempt (true or false)")
	f.Var(&preemptBatch, "preempt-batch-scheduler", "let batch jobs preempt (true or false)")
	f.Var(&preemptService, "preempt-service-scheduler", "let service jobs preempt (true or false)")
	f.Int64Var(&checkIndex, "check-index", -1, "apply only if the configuration's modify index is this (check-and-set)")
	return cmd
}

// newAutopilotSetConfigCommand is `ordo operator autopilot set-config`.
func newAutopilotSetConfigCommand(g *globals) *cobra.Command {
	var (
		cleanup                 boolFlag
		maxTrailing, minQuorum  int64
		lastContact, stabilized time.Duration
	)
	cmd := &cobra.Command{
		Use:   "set-config [flags]",
		Short: "Change autopilot's configuration on the leader; flags left out keep their setting",
		Long: `Change autopilot's configuration on the leader. It takes effect at once and
holds until the leader restarts or leadership moves: the agent file's
autopilot block is what every server starts with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			var conf api.AutopilotConfiguration
			if err := c.Get(cmd.Context(), "/v1/operator/autopilot/configuration", nil, &conf); err != nil {
				return fmt.Errorf("read autopilot configuration: %w", err)
			}
			cleanup.apply(&conf.CleanupDeadServers)
			if maxTrailing >= 0 {
				conf.MaxTrailingLogs = uint64(maxTrailing)
			}
			if minQuorum >= 0 {
				conf.MinQuorum = uint(minQuorum)
			}
			if lastContact > 0 {
				conf.LastContactThreshold = lastContact.String()
			}
			if stabilized > 0 {
				conf.ServerStabilizationTime = stabilized.String()
			}
			if err := c.Put(cmd.Context(), "/v1/operator/autopilot/configuration", conf, nil); err != nil {
				return fmt.Errorf("set autopilot configuration: %w", err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "Configuration updated!")
			return err
		},
	}
	f := cmd.Flags()
	f.Var(&cleanup, "cleanup-dead-servers", "remove servers that stopped answering (true or false)")
	f.Int64Var(&maxTrailing, "max-trailing-logs", -1, "entries a server may lag the leader and stay healthy")
	f.Int64Var(&minQuorum, "min-quorum", -1, "fewest voters dead-server cleanup leaves")
	f.DurationVar(&lastContact, "last-contact-threshold", 0, "time without contact with the leader a server stays healthy")
	f.DurationVar(&stabilized, "server-stabilization-time", 0, "time a new server must stay healthy before it votes")
	return cmd
}
