package compat

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// TestRegisterNetworkServiceTemplateWithNomadClient registers, with
// nomad/api's Jobs().Register, a job with a network block, group and task
// services with checks, and a template, and reads it back with
// Jobs().Info: the blocks come back as sent, with Nomad's defaults filled
// in.
func TestRegisterNetworkServiceTemplateWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	job := serviceJob("blocks", 1)
	tg := job.TaskGroups[0]
	tg.Networks = []*api.NetworkResource{{
		Mode:          "host",
		DynamicPorts:  []api.Port{{Label: "http", To: 8080}},
		ReservedPorts: []api.Port{{Label: "admin", Value: 29999, HostNetwork: "default"}},
	}}
	tg.Services = []*api.Service{{
		PortLabel: "http", Tags: []string{"v1", "${node.datacenter}"}, Meta: map[string]string{"team": "web"},
		CheckRestart: &api.CheckRestart{Limit: 3},
		Checks: []api.ServiceCheck{{
			Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second,
			Header: map[string][]string{"X-Probe": {"ordo"}},
		}},
	}}
	task := tg.Tasks[0]
	task.Services = []*api.Service{{
		Name: "${JOB}-admin", PortLabel: "admin", Provider: "nomad",
		Checks: []api.ServiceCheck{{Type: "tcp", Interval: 5 * time.Second, Timeout: time.Second}},
	}}
	task.Templates = []*api.Template{{
		EmbeddedTmpl: pointer(`PORT={{ env "NOMAD_PORT_http" }}`), DestPath: pointer("local/app.env"),
		ChangeMode: pointer("signal"), ChangeSignal: pointer("SIGHUP"), Envvars: pointer(true),
	}}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}

	got, _, err := c.Jobs().Info("blocks", nil)
	if err != nil {
		t.Fatal(err)
	}
	gtg := got.TaskGroups[0]
	wantNet := []*api.NetworkResource{{
		Mode:          "host",
		ReservedPorts: []api.Port{{Label: "admin", Value: 29999, HostNetwork: "default"}},
		DynamicPorts:  []api.Port{{Label: "http", To: 8080, HostNetwork: "default"}},
	}}
	for _, n := range gtg.Networks {
		n.MBits = nil // ordo sends 0 for a network that asks no bandwidth
	}
	if !reflect.DeepEqual(gtg.Networks, wantNet) {
		t.Errorf("networks %+v, want %+v", gtg.Networks, wantNet)
	}

	wantGroup := []*api.Service{{
		Name: "blocks-web", PortLabel: "http", Tags: []string{"v1", "${node.datacenter}"},
		Meta: map[string]string{"team": "web"}, AddressMode: "auto", OnUpdate: "require_healthy", Provider: "nomad",
		Checks: []api.ServiceCheck{{
			Name: `service: "blocks-web" check`, Type: "http", Path: "/health", Protocol: "http", Method: "GET",
			Interval: 10 * time.Second, Timeout: 2 * time.Second, Header: map[string][]string{"X-Probe": {"ordo"}},
			OnUpdate: "require_healthy", CheckRestart: &api.CheckRestart{Limit: 3, Grace: pointer(time.Second)},
		}},
	}}
	if !reflect.DeepEqual(gtg.Services, wantGroup) {
		t.Errorf("group services\n%s\nwant\n%s", describeServices(gtg.Services), describeServices(wantGroup))
	}
	wantTask := []*api.Service{{
		Name: "blocks-admin", PortLabel: "admin", AddressMode: "auto", OnUpdate: "require_healthy", Provider: "nomad",
		TaskName: "server",
		Checks: []api.ServiceCheck{{
			Name: `service: "blocks-admin" check`, Type: "tcp", Interval: 5 * time.Second, Timeout: time.Second,
			TaskName: "server", OnUpdate: "require_healthy",
		}},
	}}
	if gt := gtg.Tasks[0]; !reflect.DeepEqual(gt.Services, wantTask) {
		t.Errorf("task services\n%s\nwant\n%s", describeServices(gt.Services), describeServices(wantTask))
	}

	wantTmpl := []*api.Template{{
		SourcePath: pointer(""), DestPath: pointer("local/app.env"), EmbeddedTmpl: pointer(`PORT={{ env "NOMAD_PORT_http" }}`),
		ChangeMode: pointer("signal"), ChangeSignal: pointer("SIGHUP"), Splay: pointer(5 * time.Second),
		Perms: pointer("0644"), LeftDelim: pointer("{{"), RightDelim: pointer("}}"), Envvars: pointer(true),
		ErrMissingKey: pointer(false),
	}}
	if gt := gtg.Tasks[0].Templates; !reflect.DeepEqual(gt, wantTmpl) {
		t.Errorf("templates %s, want %s", describeTemplates(gt), describeTemplates(wantTmpl))
	}
	if u := gtg.Update; u == nil || u.HealthCheck == nil || *u.HealthCheck != "checks" {
		t.Errorf("update %+v: health_check should default to checks for a group with checks", u)
	}

	// A bad block is refused with the field named, and nothing registered.
	bad := serviceJob("bad", 1)
	bad.TaskGroups[0].Services = []*api.Service{{Name: "x", PortLabel: "nope"}}
	_, _, err = c.Jobs().Register(bad, nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "job.group[web].service[0].port") {
		t.Fatalf("bad service port: %v, want a 400 naming job.group[web].service[0].port", err)
	}
}

// describeServices prints services and their checks with pointers
// followed, for failure messages.
func describeServices(ss []*api.Service) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%+v\n", *s)
		for _, c := range s.Checks {
			fmt.Fprintf(&b, "  check %+v\n", c)
			if r := c.CheckRestart; r != nil {
				fmt.Fprintf(&b, "  restart limit %d grace %v ignore warnings %v\n", r.Limit, deref(r.Grace), r.IgnoreWarnings)
			}
		}
	}
	return b.String()
}

// describeTemplates prints templates with pointers followed.
func describeTemplates(ts []*api.Template) string {
	var b strings.Builder
	for _, t := range ts {
		v := reflect.ValueOf(*t)
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
				fmt.Fprintf(&b, "%s=%v ", v.Type().Field(i).Name, f.Elem().Interface())
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
