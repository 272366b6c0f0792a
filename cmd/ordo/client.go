package main

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/cmd/agent"
)

// newClient returns an API client for address, a URL or a bare host:port,
// that sends token (when set) and adds at to every request's query:
// at_index or at_time, from the -at-index and -at-time flags (attime.go),
// so reads see a past state. No overall timeout: the event stream is
// long-lived, and every call carries the command's context.
func newClient(address, token string, at url.Values, opts ...api.Option) (*api.Client, error) {
	base, err := api.BaseURL(address)
	if err != nil {
		return nil, fmt.Errorf("-address: %w", err)
	}
	opts = append([]api.Option{api.WithUserAgent("ordo-cli/" + agent.Version), api.WithToken(token), api.WithParams(at)}, opts...)
	return api.New([]string{base}, opts...)
}

// errorMessage returns what the user sees for err: the server's own
// message for an API error, the whole chain otherwise.
func errorMessage(err error) string {
	if ae, ok := errors.AsType[*api.Error](err); ok {
		return ae.Message
	}
	return err.Error()
}
