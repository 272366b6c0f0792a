package main

import (
	"fmt"
	"net/url"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/api"
)

// newUICommand is `ordo ui`, Nomad's `nomad ui`: it opens the web UI of
// the server at -address in a browser, or prints its URL.
func newUICommand(g *globals) *cobra.Command {
	var showURL bool
	var namespace string
	cmd := &cobra.Command{
		Use:   "ui [flags] [<job>]",
		Short: "Open the web UI (or print its URL with -show-url)",
		Long: `Open the web UI of the server at -address in the default browser: its
front page, or a job's page when a job id is given. -show-url prints the URL
instead; so does the command when no browser opener (xdg-open, open) is
found or stdout is not a terminal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := api.BaseURL(g.address)
			if err != nil {
				return fmt.Errorf("-address: %w", err)
			}
			u := base + "/ui/"
			if len(args) == 1 {
				u += "jobs/" + url.PathEscape(args[0]+"@"+namespace)
			}
			w := cmd.OutOrStdout()
			opener := browserOpener()
			if showURL || opener == "" || !isTerminal(w) {
				_, err := fmt.Fprintf(w, "URL for web UI: %s\n", u)
				return err
			}
			fmt.Fprintf(w, "Opening URL %q\n", u)
			if err := exec.CommandContext(cmd.Context(), opener, u).Run(); err != nil {
				return fmt.Errorf("open %s with %s: %w", u, opener, err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&showURL, "show-url", false, "print the URL instead of opening a browser")
	cmd.Flags().StringVar(&namespace, "namespace", "default", "namespace of the job")
	return cmd
}

// browserOpener returns the program that opens a URL in the user's
// browser, "" when there is none on PATH.
func browserOpener() string {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	if _, err := exec.LookPath(name); err != nil {
		return ""
	}
	return name
}
