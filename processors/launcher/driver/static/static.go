package static

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
)

// DefaultPort is the port dialled when a host's address names none (ssh,
// as a CI system would reach the host).
const DefaultPort = "22"

// DefaultTimeout bounds a reachability check when Config sets none.
const DefaultTimeout = 2 * time.Second

// Dialer opens TCP connections; *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config tunes the driver.
type Config struct {
	// Timeout bounds one reachability check; default DefaultTimeout.
	Timeout time.Duration
	// Dialer connects to hosts; default a *net.Dialer.
	Dialer Dialer
}

// Driver hands out a static provider's hosts.
type Driver struct {
	hosts []driver.Host
	cfg   Config
}

var _ driver.HostDriver = (*Driver)(nil)

// New returns the driver of hosts; zero fields of c take their defaults.
func New(hosts events.StaticConfig, c Config) *Driver {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Dialer == nil {
		c.Dialer = &net.Dialer{}
	}
	d := &Driver{cfg: c}
	for _, h := range hosts.Hosts {
		d.hosts = append(d.hosts, driver.Host{Name: h.Name, Address: h.Address, Labels: append([]string(nil), h.Labels...)})
	}
	return d
}

// Hosts implements driver.HostDriver.
func (d *Driver) Hosts() []driver.Host { return d.hosts }

// Addr returns the address Reachable dials for host.
func Addr(host driver.Host) string {
	if _, _, err := net.SplitHostPort(host.Address); err == nil {
		return host.Address
	}
	return net.JoinHostPort(host.Address, DefaultPort)
}

// Reachable implements driver.HostDriver: a TCP connect within Timeout.
func (d *Driver) Reachable(ctx context.Context, host driver.Host) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	addr := Addr(host)
	c, err := d.cfg.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("host %s at %s: %w: %v", host.Name, addr, driver.ErrUnreachable, err)
	}
	_ = c.Close()
	return nil
}

// Create implements driver.Driver: hosts are registered, never created.
func (d *Driver) Create(spec driver.Spec) driver.CreateMachine {
	return failed{fmt.Errorf("create %s: the static driver registers hosts and creates none: %w", spec.InstanceID, driver.ErrPermanent)}
}

// Delete implements driver.Driver: a host leaving the configuration is
// only forgotten.
func (d *Driver) Delete(_, _ string) driver.Machine { return done{} }

// Quota implements driver.Driver: unlimited, the hosts are the bound.
func (d *Driver) Quota(context.Context) (driver.Quota, error) { return driver.Quota{}, nil }

// InstanceType implements driver.Driver: a host holds no quota resources.
func (d *Driver) InstanceType(context.Context, string) (driver.Resources, error) {
	return driver.Resources{}, nil
}

type failed struct{ err error }

func (f failed) Advance(context.Context, time.Time) (bool, error) { return true, f.err }
func (f failed) Result() driver.Created                           { return driver.Created{} }

type done struct{}

func (done) Advance(context.Context, time.Time) (bool, error) { return true, nil }
