package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/cmd/agent"
)

// defaultAddr is the API address used when neither -address nor $ORDO_ADDR is set.
const defaultAddr = "http://127.0.0.1:4646"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process's exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runWith(args, stdout, stderr)
}

// runWith is run with the options of the root command (env.go): tests fix
// the environment and the clock.
func runWith(args []string, stdout, stderr io.Writer, opts ...rootOption) int {
	root := newRootCommand(stdout, stderr, opts...)
	root.SetArgs(normalizeArgs(args))
	if err := root.ExecuteContext(context.Background()); err != nil {
		code := exitCodeError
		if ee, ok := errors.AsType[*exitError](err); ok {
			code = ee.code // `job plan`: 1 for changes, 255 for errors
		}
		if msg := errorMessage(err); msg != "" {
			fmt.Fprintf(stderr, "Error: %s\n", msg)
		}
		if ue, ok := errors.AsType[*usageError](err); ok {
			ue.writeUsage(stderr)
		}
		return code
	}
	return 0
}

// globals holds the flags every client command shares.
type globals struct {
	address string
	// atIndex and atTime make every read answer from a past state
	// (attime.go); 0 and "" read the current one.
	atIndex uint64
	atTime  string
	// token is the ACL token sent with every request (-token,
	// $ORDO_TOKEN or $NOMAD_TOKEN; acl.go).
	token string
	// namespace and region are sent with every request that names none
	// (-namespace on the commands that have it wins; env.go).
	namespace, region string
	tls               tlsFlags
	// verbose shows full ids and timestamps (format.go).
	verbose bool
	// getenv and clock are the process's environment and time; tests fix
	// them (env.go).
	getenv func(string) string
	clock  clock.Clock
}

// client returns an API client for the -address flag, reading at the
// -at-index or -at-time flag's past state when one is set.
func (g *globals) client(opts ...api.Option) (*api.Client, error) {
	at, err := g.atParams(g.now())
	if err != nil {
		return nil, err
	}
	return g.clientAt(at, opts...)
}

// clientAt is client reading at the query parameters at (nil: the
// current state).
func (g *globals) clientAt(at url.Values, opts ...api.Option) (*api.Client, error) {
	hc, err := g.tls.httpClient()
	if err != nil {
		return nil, err
	}
	base := []api.Option{api.WithNamespace(g.namespace), api.WithRegion(g.region)}
	if hc != nil {
		base = append(base, api.WithHTTPClient(hc))
	}
	return newClient(g.address, g.token, at, append(base, opts...)...)
}

func newRootCommand(stdout, stderr io.Writer, opts ...rootOption) *cobra.Command {
	g := &globals{getenv: os.Getenv, clock: clock.System{}}
	for _, o := range opts {
		o(g)
	}
	root := &cobra.Command{
		Use:           "ordo",
		Short:         "ordo runs and operates an event-sourced cluster control plane",
		Version:       agent.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("ordo v{{.Version}}\n")
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{cmd: cmd, err: err} // usage.go
	})
	root.PersistentFlags().StringVar(&g.address, "address", defaultAddress(g.getenv),
		"address of an ordo server's HTTP API ($ORDO_ADDR, $NOMAD_ADDR)")
	root.PersistentFlags().Uint64Var(&g.atIndex, "at-index", 0,
		"read the state as it stood once this raft index was applied")
	root.PersistentFlags().StringVar(&g.atTime, "at-time", "",
		"read the state as it stood at this time: RFC 3339, or a duration ago (2h)")
	root.PersistentFlags().StringVar(&g.token, "token", defaultToken(g.getenv),
		"ACL token's secret sent with every request ($ORDO_TOKEN, $NOMAD_TOKEN)")
	addGlobalFlags(root, g) // env.go
	root.AddCommand(
		addAgentMonitor(newAgentCommand(), g),
		newACLCommand(g), // acl.go
		newNamespaceCommand(g),
		newVarCommand(g),     // var.go
		newServiceCommand(g), // service.go
		newNodeCommand(g),
		newJobCommand(g),
		newEvalCommand(g), newAllocCommand(g), newDeploymentCommand(g),
		newOperatorCommand(g),
		newSystemCommand(g), // evaldelete.go
		newLogCommand(g),
		newDebugCommand(g), // debug.go
		newReplayCommand(), // replay.go
		newHistoryCommand(g),
		newProviderCommand(g), newNodeRequestCommand(g), newInstanceCommand(g), // launcher.go
		newEventsCommand(),  // events.go
		newVolumeCommand(g), // volume.go
		newPluginCommand(g), // plugin.go
		newVersionCommand(),
		newUICommand(g),                             // ui.go
		newStatusCommand(g),                         // status.go
		newServerCommand(g), newAgentInfoCommand(g), // cluster.go
	)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return g.asOfBanner(cmd) // banner.go
	}
	requireSubcommand(root, stderr) // usage.go; keep last
	return root
}

// defaultAddress returns $ORDO_ADDR, else $NOMAD_ADDR, or defaultAddr when
// both are unset or empty.
func defaultAddress(getenv func(string) string) string {
	if a := lookupEnv(getenv, "ADDR"); a != "" {
		return a
	}
	return defaultAddr
}

// normalizeArgs rewrites Nomad-style single-dash long flags (-json,
// -data-dir d, -data-dir=d) into the double-dash form pflag parses, since
// pflag reads "-json" as the shorthands -j -s -o -n. An argument is
// rewritten when it starts with one dash, is longer than two characters and
// is not a negative number; "-h", "-", "--x", negative numbers and every
// argument after a bare "--" are kept. Flag values are not told apart from
// flags, so pass a value that starts with a dash as -flag=-value.
func normalizeArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		if a == "exec" && i > 0 && out[i-1] == "alloc" { // allocexec.go: the command's arguments are kept
			out[i] = a
			return append(out[:i+1], normalizeExecArgs(args[i+1:])...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !isNegativeNumber(a) {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

// isNegativeNumber reports whether s is a negative decimal number such as
// -3, -0.5 or -1e3 (but not -inf or -nan, which could be flags).
func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	if !digit(s[1]) && !(s[1] == '.' && len(s) > 2 && digit(s[2])) {
		return false
	}
	_, err := strconv.ParseFloat(s[1:], 64)
	return err == nil
}

// oneArg accepts exactly one positional argument, described by name.
func oneArg(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("this command takes one argument: %s", name)
		}
		return nil
	}
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ordo's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// versionText is what `ordo version` prints.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ordo v%s\n", agent.Version)
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				fmt.Fprintf(&b, "Revision %s\n", s.Value)
			}
		}
	}
	fmt.Fprintf(&b, "Go %s %s/%s\n", strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
