package static_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/static"
)

// Reachable connects to a real listener; a closed port is unreachable,
// wrapping driver.ErrUnreachable; an address without a port gets 22.
func TestReachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := gone.Addr().String()
	gone.Close()
	d := static.New(events.StaticConfig{Hosts: []events.StaticHost{
		{Name: "up", Address: ln.Addr().String(), Labels: []string{"bare"}},
		{Name: "down", Address: closed, Labels: []string{"bare"}}}}, static.Config{Timeout: time.Second})
	hosts := d.Hosts()
	if len(hosts) != 2 || hosts[0].Name != "up" {
		t.Fatalf("hosts %+v", hosts)
	}
	if err := d.Reachable(context.Background(), hosts[0]); err != nil {
		t.Fatalf("listening host: %v", err)
	}
	if err := d.Reachable(context.Background(), hosts[1]); !errors.Is(err, driver.ErrUnreachable) {
		t.Fatalf("closed port: %v, want ErrUnreachable", err)
	}
	if a := static.Addr(driver.Host{Address: "10.0.0.5"}); a != "10.0.0.5:22" {
		t.Fatalf("default port: %s", a)
	}
	if _, err := d.Create(driver.Spec{InstanceID: "i"}).Advance(context.Background(), time.Now()); !errors.Is(err, driver.ErrPermanent) {
		t.Fatalf("create: %v, want ErrPermanent", err)
	}
	if q, err := d.Quota(context.Background()); err != nil || q != (driver.Quota{}) {
		t.Fatalf("quota %+v %v: want unlimited", q, err)
	}
}
