package ui

import (
	"testing"

	"github.com/ordoplane/ordo/test/testagent"
)

// The operator page shows the raft peer (the leader), the projections,
// a verify job run to its end with its progress, and says plainly that
// no Kafka mirror is configured.
func TestOperatorPage(t *testing.T) {
	s := start(t)
	ans := testagent.Call(t, s.addr, "GET", "/v1/operator/raft/configuration", "")
	var conf struct {
		Servers []struct{ ID, Address string }
	}
	decode(t, ans.Body, &conf)
	if len(conf.Servers) != 1 {
		t.Fatalf("raft configuration: %s", ans.Body)
	}

	s.open("/operator")
	s.waitText("main table[aria-label='raft peers']", conf.Servers[0].ID)
	s.waitText("main table[aria-label='raft peers']", "leader, voter")
	s.waitText("main table[aria-label='projections']", "history")
	s.waitText("main", "The Kafka mirror is not configured")
	s.checkA11y("operator")

	s.click("main button", "verify every projection")
	s.waitText("main .opjob", "verify of")
	s.waitText("main .opjob", "done")
	s.waitText("main .opjob label.progress", "100%")
	s.waitText("main table[aria-label='verify results']", "passing")
	s.shot("operator")
}
