package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

// newEventsCommand builds `ordo events`: what the log's events look like.
// Its subcommands read the event registry compiled into this binary and
// need no agent.
func newEventsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Describe the event types the log records",
	}
	cmd.AddCommand(newEventsSchemaCommand())
	return cmd
}

func newEventsSchemaCommand() *cobra.Command {
	var (
		version  uint16
		asJSON   bool
		envelope bool
	)
	cmd := &cobra.Command{
		Use:   "schema [type]",
		Short: "List the event types, or print the JSON Schema of one",
		Long: `Without a type, list every event type with its current version, topic, entity
keys and sensitive fields. With a type, print the JSON Schema (draft 2020-12)
of its payload as it leaves the cluster (event stream, Kafka mirror): at the
current version, or at -version N, which describes the current payload that
events written at N are upcast to. -envelope prints the schema of the record
around a payload. The schemas come from the registry compiled into this
binary; GET /v1/events/schema asks a server.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			switch {
			case envelope:
				if len(args) > 0 || version != 0 {
					return errors.New("-envelope takes no type or -version")
				}
				b, err := schema.Envelope().MarshalIndent()
				if err != nil {
					return err
				}
				_, err = out.Write(b)
				return err
			case len(args) == 0:
				if version != 0 {
					return errors.New("-version needs an event type")
				}
				return printEventTypes(cmd, asJSON)
			}
			s, err := schema.Lookup(args[0], version)
			switch {
			case errors.Is(err, events.ErrUnknownType):
				return fmt.Errorf("%w %q ('ordo events schema' lists the types)", events.ErrUnknownType, args[0])
			case err != nil:
				return err
			}
			b, err := s.MarshalIndent()
			if err != nil {
				return err
			}
			_, err = out.Write(b)
			return err
		},
	}
	cmd.Flags().Uint16Var(&version, "version", 0, "the version to describe (default: the current one)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "list the types as JSON")
	cmd.Flags().BoolVar(&envelope, "envelope", false, "print the schema of the record around a payload")
	return cmd
}

// printEventTypes writes the list of registered types.
func printEventTypes(cmd *cobra.Command, asJSON bool) error {
	entries, err := schema.List()
	if err != nil {
		return err
	}
	if asJSON {
		b, err := json.Marshal(entries)
		if err != nil {
			return fmt.Errorf("event types: %w", err)
		}
		return printJSON(cmd.OutOrStdout(), b)
	}
	rows := make([][]string, 0, len(entries))
	for _, e := range entries {
		versions := make([]string, len(e.Versions))
		for i, v := range e.Versions {
			versions[i] = strconv.Itoa(int(v))
		}
		sensitive := "no"
		if len(e.Sensitive) > 0 {
			sensitive = "yes: " + strings.Join(e.Sensitive, ",")
		}
		rows = append(rows, []string{e.Type, strconv.Itoa(int(e.Version)), strings.Join(versions, ","),
			e.Topic, orDash(strings.Join(e.Keys, ",")), sensitive})
	}
	return printTable(cmd.OutOrStdout(), []string{"Type", "Version", "Versions", "Topic", "Keys", "Sensitive"}, rows)
}
