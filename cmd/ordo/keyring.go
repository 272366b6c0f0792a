package main

import (
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

// newRootKeyCommand is `ordo operator root`: the root keyring (docs/keyring.md).
func newRootKeyCommand(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "root", Short: "Manage the cluster's root keys"}
	kr := &cobra.Command{Use: "keyring", Short: "List, rotate and remove root keys (docs/keyring.md)"}
	kr.AddCommand(newKeyringListCommand(g), newKeyringRotateCommand(g), newKeyringRemoveCommand(g))
	root.AddCommand(kr)
	return root
}

// cliRootKey is a root key's metadata as the API returns it.
type cliRootKey struct {
	KeyID       string
	Algorithm   string
	State       string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
}

func newKeyringListCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the root keys: id, state, algorithm, create time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return show(cmd, g, "/v1/operator/keyring/keys", nil, "list root keys", asJSON, printRootKeys)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON answer")
	addTemplateFlag(cmd)
	return cmd
}

func printRootKeys(w io.Writer, keys []cliRootKey) error {
	if _, err := fmt.Fprintf(w, "%-27s  %-10s  %-10s  %s\n", "Key", "State", "Algorithm", "Create Time"); err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "%-27s  %-10s  %-10s  %s\n", k.KeyID, k.State, k.Algorithm,
			time.Unix(0, k.CreateTime).UTC().Format(time.RFC3339)); err != nil {
			return err
		}
	}
	return nil
}

func newKeyringRotateCommand(g *globals) *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Make a new root key active; -full also re-encrypts every variable with it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			if full {
				q.Set("full", "true")
			}
			var out struct {
				Key   cliRootKey
				Index uint64
			}
			if err := c.Call(cmd.Context(), "PUT", "/v1/operator/keyring/rotate", q, nil, &out); err != nil {
				return fmt.Errorf("rotate: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "New active key %s (index %d)%s\n", out.Key.KeyID, out.Index,
				map[bool]string{true: "; re-encrypting every variable", false: ""}[full])
			return err
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "re-encrypt every variable with the new key")
	return cmd
}

func newKeyringRemoveCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove <key-id>",
		Short: "Remove an inactive root key (the active key is refused)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), "/v1/operator/keyring/key/"+url.PathEscape(args[0]), nil); err != nil {
				return fmt.Errorf("remove %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Removed root key %s\n", args[0])
			return err
		},
	}
}
