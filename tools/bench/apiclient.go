package main

import (
	"fmt"
	"os"

	"github.com/ordoplane/ordo/api"
)

// benchClient returns an API client of the server at addr (host:port),
// as every figure that calls the HTTP API uses.
func benchClient(addr string, opts ...api.Option) *api.Client {
	c, err := api.New([]string{addr}, append([]api.Option{api.WithUserAgent("ordo-bench")}, opts...)...)
	if err != nil { // addr is a listener's host:port: only a bug gets here
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	return c
}
