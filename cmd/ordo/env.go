package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordoplane/ordo/clock"
)

// lookupEnv returns $ORDO_<name>, else $NOMAD_<name> (a Nomad user's
// shell), else "". The names the CLI reads:
//
//	ADDR          the server's HTTP API address (-address)
//	TOKEN         the ACL token's secret (-token)
//	NAMESPACE     the namespace of requests that name none (-namespace)
//	REGION        the region sent with every request (-region)
//	CACERT        a PEM file of CAs that verify the server (-ca-cert)
//	CLIENT_CERT   a PEM client certificate for mutual TLS (-client-cert)
//	CLIENT_KEY    the key of CLIENT_CERT (-client-key)
//	SKIP_VERIFY   "true": do not verify the server's certificate (-tls-skip-verify)
func lookupEnv(getenv func(string) string, name string) string {
	if v := getenv("ORDO_" + name); v != "" {
		return v
	}
	return getenv("NOMAD_" + name)
}

// rootOption changes what newRootCommand reads from the process: the
// environment and the clock (tests fix both).
type rootOption func(*globals)

// withGetenv makes the CLI read environment variables through getenv.
func withGetenv(getenv func(string) string) rootOption {
	return func(g *globals) { g.getenv = getenv }
}

// withClock makes the CLI tell time (relative times, -at-time) by c.
func withClock(c clock.Clock) rootOption {
	return func(g *globals) { g.clock = c }
}

// env returns the variable name (ADDR, NAMESPACE, …) as lookupEnv reads it.
func (g *globals) env(name string) string {
	getenv := g.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return lookupEnv(getenv, name)
}

// now is the CLI's current time, from its clock.
func (g *globals) now() time.Time {
	if g.clock == nil {
		return time.Now()
	}
	return g.clock.Now()
}

// display returns how this command renders ids and times (format.go).
func (g *globals) display() display {
	return display{verbose: g.verbose, now: g.now()}
}

// tlsFlags are the TLS settings of the client: -ca-cert, -client-cert,
// -client-key and -tls-skip-verify, defaulting to their environment
// variables.
type tlsFlags struct {
	caCert, clientCert, clientKey string
	skipVerify                    bool
}

// httpClient returns an HTTP client for the TLS settings, or nil when none
// is set (the API client's default then serves).
func (t tlsFlags) httpClient() (*http.Client, error) {
	if t.caCert == "" && t.clientCert == "" && t.clientKey == "" && !t.skipVerify {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: t.skipVerify} //nolint:gosec // the user asked for it
	if t.caCert != "" {
		pem, err := os.ReadFile(t.caCert)
		if err != nil {
			return nil, fmt.Errorf("-ca-cert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-ca-cert: %s holds no PEM certificate", t.caCert)
		}
		cfg.RootCAs = pool
	}
	if t.clientCert != "" || t.clientKey != "" {
		if t.clientCert == "" || t.clientKey == "" {
			return nil, fmt.Errorf("-client-cert and -client-key go together")
		}
		cert, err := tls.LoadX509KeyPair(t.clientCert, t.clientKey)
		if err != nil {
			return nil, fmt.Errorf("-client-cert: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}

// envBool parses a boolean environment value; anything unparsable is false.
func envBool(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}

// addGlobalFlags adds the flags of env.go and format.go every command
// shares: -region, the TLS flags and -verbose; the namespace of requests
// comes from the environment (commands that take -namespace override it).
func addGlobalFlags(root *cobra.Command, g *globals) {
	g.namespace = g.env("NAMESPACE")
	f := root.PersistentFlags()
	f.StringVar(&g.region, "region", g.env("REGION"), "region sent with every request ($ORDO_REGION, $NOMAD_REGION)")
	f.StringVar(&g.tls.caCert, "ca-cert", g.env("CACERT"),
		"PEM file of CA certificates that verify the server ($ORDO_CACERT, $NOMAD_CACERT)")
	f.StringVar(&g.tls.clientCert, "client-cert", g.env("CLIENT_CERT"),
		"PEM client certificate for mutual TLS ($ORDO_CLIENT_CERT, $NOMAD_CLIENT_CERT)")
	f.StringVar(&g.tls.clientKey, "client-key", g.env("CLIENT_KEY"),
		"key of -client-cert ($ORDO_CLIENT_KEY, $NOMAD_CLIENT_KEY)")
	f.BoolVar(&g.tls.skipVerify, "tls-skip-verify", envBool(g.env("SKIP_VERIFY")),
		"do not verify the server's certificate ($ORDO_SKIP_VERIFY, $NOMAD_SKIP_VERIFY)")
	f.BoolVar(&g.verbose, "verbose", false, "show full ids and timestamps instead of short ids and relative times")
}
