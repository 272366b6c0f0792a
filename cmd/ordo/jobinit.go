package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
)

// exampleJob is what `job init` writes: a service job that runs on the
// client of `ordo agent -dev` as it is.
//
//go:embed testdata/jobverbs/example.nomad.hcl
var exampleJob []byte

// defaultInitFile is the file `job init` writes when given none, Nomad's
// name for it.
const defaultInitFile = "example.nomad.hcl"

func newJobInitCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [<file>]",
		Short: "Write an example jobspec to start from",
		Long: `Write an example jobspec (example.nomad.hcl unless a file is named) that
runs as it is on ordo agent -dev: a service job whose task, run by the
exec driver, prints the date every five seconds. An existing file is
never overwritten.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := defaultInitFile
			if len(args) == 1 {
				path = args[0]
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("job file %q already exists", path)
			} else if err != nil {
				return err
			}
			if _, err := f.Write(exampleJob); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", path, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Example job file written to %s\n", path)
			return err
		},
	}
}
