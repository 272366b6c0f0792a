package ui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	napi "github.com/hashicorp/nomad/api"

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
	s.click("main button", "Download a snapshot")
	s.waitText("main [role=status]", "Saved ordo-")
	s.shot("operator")
}

// The namespaces page links each namespace to its jobs; the variables
// page lists a variable's path, never its values, and its page shows
// them only once asked; the volumes and launcher pages say what is
// empty.
func TestNamespacesVariablesVolumesLauncher(t *testing.T) {
	s := start(t)
	testagent.WaitFor(t, testagent.ServerTimeout, "the variable written (once the first root key exists)", func() bool {
		_, _, err := s.api.Variables().Create(&napi.Variable{Path: "app/db", Items: napi.VariableItems{"password": "hunter2"}}, nil)
		return err == nil
	})

	s.open("/namespaces")
	s.waitText("main table[aria-label='namespaces']", "default")
	s.shot("namespaces")
	s.checkA11y("namespaces")
	s.click("main table a", "jobs in namespace default")
	s.waitText("main h1", "Jobs")
	if !strings.Contains(s.url(), "namespace=default") {
		t.Fatalf("the namespace's link went to %s", s.url())
	}

	s.open("/variables")
	s.waitText("main table[aria-label='variables']", "app/db")
	s.waitNoText("main", "hunter2")
	s.shot("variables")
	s.checkA11y("variables")
	s.click("main table a", "app/db")
	s.waitText("main h1", "app/db")
	s.waitText("main", "Modify index")
	s.waitNoText("main", "hunter2")
	s.click("main button", "Show values")
	s.waitText("main table[aria-label='values']", "hunter2")
	s.shot("variable")
	s.checkA11y("variable")

	s.open("/csi/volumes")
	s.waitText("main", "No CSI volumes.")
	s.waitText("main", "No CSI plugins.")
	s.checkA11y("volumes")

	s.open("/launcher")
	s.waitText("main", "No providers.")
	s.waitText("main", "No node requests.")
	s.waitText("main", "No instances.")
	hcl, err := os.ReadFile("../../docs/examples/providers/cheap-cloud.hcl")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"HCL": string(hcl), "Filename": "cheap-cloud.hcl"})
	testagent.PutOK(t, s.addr, "/v1/providers", string(body))
	s.waitText("main table[aria-label='providers']", "cheap-cloud")  // live
	s.waitText("main table[aria-label='instances']", "ubuntu-small") // its min_ready instance
	s.shot("launcher")
	s.checkA11y("launcher")
}
