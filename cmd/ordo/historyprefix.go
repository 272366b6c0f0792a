package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

// historyListRoutes are the lists that resolve an id prefix for `ordo
// history`, by the API's entity kind.
var historyListRoutes = map[string]string{
	"alloc":      "/v1/allocations",
	"eval":       "/v1/evaluations",
	"deployment": "/v1/deployments",
	"node":       "/v1/nodes",
}

// resolveHistoryID returns the full id of the entity of kind that
// idOrPrefix names, as every other command takes a prefix: the one entity
// whose id starts with it. An exact id, a prefix that matches nothing (an
// entity garbage-collected since, whose history is still kept) and kinds
// without a list are returned as given; a prefix matching several is an
// error naming them.
func resolveHistoryID(cmd *cobra.Command, g *globals, kind, idOrPrefix string) (string, error) {
	route, ok := historyListRoutes[kind]
	if !ok {
		return idOrPrefix, nil
	}
	c, err := g.client()
	if err != nil {
		return "", err
	}
	q := url.Values{"prefix": {idOrPrefix}}
	if kind != "node" {
		q.Set("namespace", "*")
	}
	var list []struct{ ID string }
	if err := c.Get(cmd.Context(), route, q, &list); err != nil {
		return idOrPrefix, nil // the history route says what is wrong
	}
	var ids []string
	for _, e := range list {
		if e.ID == idOrPrefix {
			return e.ID, nil
		}
		if strings.HasPrefix(e.ID, idOrPrefix) {
			ids = append(ids, e.ID)
		}
	}
	switch len(ids) {
	case 0:
		return idOrPrefix, nil
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("prefix %q matches several %ss: %s", idOrPrefix, kind, strings.Join(ids, ", "))
}
