package allocrunner_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

// TestRestartScripts runs testdata/restart: DecideRestart driven by a
// script (datadriven; rewrite the expectations with -rewrite). Times are
// offsets from a fixed instant.
//
//	policy attempts= interval= delay= mode=   sets the group's restart policy
//	exit <failed|success|unrecoverable> [type=service|batch|sysbatch] at=<offset>
//	     [jitter=0.5] [window=none|(<start>, <count>)]
//	                                         decides; the window is the one the
//	                                         last decision returned unless given
func TestRestartScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/restart", func(t *testing.T, path string) {
		t0 := time.Unix(1_700_000_000, 0)
		var (
			policy events.RestartPolicy
			window allocrunner.RestartWindow
		)
		offset := func(s string) time.Time {
			d, err := time.ParseDuration(s)
			if err != nil {
				t.Fatalf("bad offset %q: %v", s, err)
			}
			return t0.Add(d)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "policy":
				policy = events.RestartPolicy{}
				d.ScanArgs(t, "attempts", &policy.Attempts)
				var interval, delay string
				d.ScanArgs(t, "interval", &interval)
				d.ScanArgs(t, "delay", &delay)
				d.ScanArgs(t, "mode", &policy.Mode)
				policy.Interval, policy.Delay = offset(interval).Sub(t0), offset(delay).Sub(t0)
				return "ok"
			case "exit":
				var exit allocrunner.Exit
				switch how := d.CmdArgs[0].Key; how {
				case "failed":
				case "success":
					exit.Successful = true
				case "unrecoverable":
					exit.Unrecoverable = true
				default:
					t.Fatalf("exit: unknown %q", how)
				}
				jobType := events.JobTypeService
				d.MaybeScanArgs(t, "type", &jobType)
				var at string
				d.ScanArgs(t, "at", &at)
				jitter := 0.0
				if arg, ok := d.Arg("jitter"); ok {
					var err error
					if jitter, err = strconv.ParseFloat(arg.Vals[0], 64); err != nil {
						t.Fatal(err)
					}
				}
				if arg, ok := d.Arg("window"); ok {
					window = allocrunner.RestartWindow{}
					if arg.Vals[0] != "none" {
						window.Start = offset(arg.Vals[0])
						arg.Scan(t, 1, &window.Count)
					}
				}
				dec := allocrunner.DecideRestart(policy, jobType, window, exit, offset(at), jitter)
				window = dec.Window
				out := dec.Action.String()
				if dec.Action == allocrunner.Restart {
					out += fmt.Sprintf(" after %s", dec.Delay)
				}
				out += fmt.Sprintf(" (%s)\n", dec.Reason)
				if dec.Window.Start.IsZero() {
					return out + fmt.Sprintf("window none, count %d", dec.Window.Count)
				}
				return out + fmt.Sprintf("window %s, count %d", dec.Window.Start.Sub(t0), dec.Window.Count)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}
