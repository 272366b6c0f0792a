// Package static is the launcher's static driver: a provider's hosts are
// listed in its configuration, registered as ready instances when the
// provider starts and when its configuration changes (P29), and handed
// out to requests only when a TCP connect to the host succeeds. A static
// provider never creates an instance and never pauses (P8): a host that
// does not answer leaves its request for later, undeclined.
//
// # Usage
//
//	d := static.New(*cfg.Static, static.Config{Timeout: 2 * time.Second})
//	var _ driver.HostDriver = d
//	err := d.Reachable(ctx, d.Hosts()[0]) // nil, or wraps driver.ErrUnreachable
//
// # Concurrency
//
// A Driver is immutable after New; its methods may be called from any
// goroutine.
//
// # Invariants
//
//   - Create always fails with driver.ErrPermanent: hosts are registered,
//     never created. Delete (a host leaving the configuration) touches
//     nothing on the host.
//   - Quota is unlimited and instance types hold nothing: a static
//     provider is bounded by its hosts alone, so it never pauses at quota.
//   - Reachable dials Address (port DefaultPort when it names none) and
//     returns within Timeout.
package static
