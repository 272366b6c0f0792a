package taskenv_test

import (
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/client/taskenv"
	"github.com/ordoplane/ordo/events"
)

func testNode() *events.Node {
	return &events.Node{ID: "node-uuid", Name: "client-1", Datacenter: "dc2", NodeClass: "large",
		Attributes: map[string]string{"kernel.name": "linux", "unique.hostname": "h1"},
		Meta:       map[string]string{"rack": "r7"}}
}

func TestReplace(t *testing.T) {
	env := taskenv.New(map[string]string{"NOMAD_META_dir": "/srv", "HOME": "/root", "NOMAD_PORT_http": "23456"}, testNode())
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${NOMAD_META_dir}/x", "/srv/x"},
		{"${node.unique.name} ${node.unique.id} ${node.datacenter} ${node.class} ${node.region} ${node.pool}",
			"client-1 node-uuid dc2 large global default"},
		{"${attr.kernel.name}-${attr.unique.hostname}-${meta.rack}", "linux-h1-r7"},
		{`${env["HOME"]}:${env.HOME}`, "/root:/root"},
		{"127.0.0.1:${NOMAD_PORT_http}", "127.0.0.1:23456"},
		{"${ NOMAD_PORT_http }", "23456"},
		// Unknown variables, and an unclosed one, are left as written.
		{"${NOMAD_META_missing} ${attr.nope} ${meta.nope} ${foo.bar}", "${NOMAD_META_missing} ${attr.nope} ${meta.nope} ${foo.bar}"},
		{`${env["NOPE"]} ${env[HOME]}`, `${env["NOPE"]} ${env[HOME]}`},
		{"a ${NOMAD_PORT_http", "a ${NOMAD_PORT_http"},
		{"$HOME ${}", "$HOME ${}"},
	} {
		if got := env.Replace(c.in); got != c.want {
			t.Errorf("Replace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReplaceConfigDeep(t *testing.T) {
	env := taskenv.New(map[string]string{"NOMAD_TASK_NAME": "web"}, nil)
	cfg := map[string]any{"command": "/bin/${NOMAD_TASK_NAME}", "n": int64(3),
		"args": []any{"-name", "${NOMAD_TASK_NAME}", map[string]any{"k": "${NOMAD_TASK_NAME}"}}}
	got := env.ReplaceConfig(cfg)
	want := map[string]any{"command": "/bin/web", "n": int64(3),
		"args": []any{"-name", "web", map[string]any{"k": "web"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReplaceConfig = %#v, want %#v", got, want)
	}
	if cfg["command"] != "/bin/${NOMAD_TASK_NAME}" {
		t.Fatal("ReplaceConfig changed its input")
	}
	// Without a node, node variables stay as written.
	if got := env.Replace("${node.unique.name}"); got != "${node.unique.name}" {
		t.Fatalf("no node: %q", got)
	}
}

func TestBuild(t *testing.T) {
	a := &events.Allocation{ID: "0123456789abcdef", Name: "web.api[4]", JobID: "web", TaskGroup: "api", Namespace: "prod",
		AllocatedResources: &events.AllocatedResources{Shared: events.AllocatedSharedResources{Ports: []events.PortMapping{
			{Label: "http", Value: 23456, HostIP: "10.0.0.7"},
			{Label: "admin", Value: 9000, To: 8080, HostIP: "10.0.0.7"},
			{Label: "metrics-port", Value: 9100, HostIP: "10.0.0.7"},
		}}}}
	job := &events.Job{ID: "web", Name: "web-name", Meta: map[string]string{"dir": "/srv/${node.unique.name}", "team": "job"}}
	tg := &events.TaskGroup{Name: "api", Meta: map[string]string{"team": "group"}}
	task := &events.Task{Name: "server", Resources: &events.Resources{CPU: 500, MemoryMB: 256, MemoryMaxMB: 512},
		Meta: map[string]string{"Role": "front"},
		Env:  map[string]string{"LISTEN": "${NOMAD_IP_http}:${NOMAD_PORT_http}", "DIR": "${NOMAD_META_dir}", "NOMAD_DC": "mine"}}
	env := taskenv.Build(taskenv.Task{Alloc: a, Job: job, Group: tg, Task: task, Node: testNode(),
		AllocDir: "/a/alloc", TaskDir: "/a/server", Extra: map[string]string{"FROM_TEMPLATE": "1"}})
	want := map[string]string{
		"NOMAD_ALLOC_ID": "0123456789abcdef", "NOMAD_SHORT_ALLOC_ID": "01234567", "NOMAD_ALLOC_NAME": "web.api[4]",
		"NOMAD_ALLOC_INDEX": "4", "NOMAD_JOB_ID": "web", "NOMAD_JOB_NAME": "web-name", "NOMAD_GROUP_NAME": "api",
		"NOMAD_TASK_NAME": "server", "NOMAD_NAMESPACE": "prod", "NOMAD_REGION": "global",
		"NOMAD_ALLOC_DIR": "/a/alloc", "NOMAD_TASK_DIR": "/a/server/local", "NOMAD_SECRETS_DIR": "/a/server/secrets",
		"NOMAD_CPU_LIMIT": "500", "NOMAD_MEMORY_LIMIT": "256", "NOMAD_MEMORY_MAX_LIMIT": "512",
		"NOMAD_META_dir": "/srv/client-1", "NOMAD_META_DIR": "/srv/client-1",
		"NOMAD_META_team": "group", "NOMAD_META_TEAM": "group", "NOMAD_META_Role": "front", "NOMAD_META_ROLE": "front",
		"NOMAD_PORT_http": "23456", "NOMAD_HOST_PORT_http": "23456", "NOMAD_IP_http": "10.0.0.7",
		"NOMAD_HOST_IP_http": "10.0.0.7", "NOMAD_ADDR_http": "10.0.0.7:23456", "NOMAD_HOST_ADDR_http": "10.0.0.7:23456",
		"NOMAD_PORT_admin": "8080", "NOMAD_HOST_PORT_admin": "9000", "NOMAD_IP_admin": "10.0.0.7",
		"NOMAD_HOST_IP_admin": "10.0.0.7", "NOMAD_ADDR_admin": "10.0.0.7:8080", "NOMAD_HOST_ADDR_admin": "10.0.0.7:9000",
		"NOMAD_PORT_metrics_port": "9100", "NOMAD_HOST_PORT_metrics_port": "9100", "NOMAD_IP_metrics_port": "10.0.0.7",
		"NOMAD_HOST_IP_metrics_port": "10.0.0.7", "NOMAD_ADDR_metrics_port": "10.0.0.7:9100",
		"NOMAD_HOST_ADDR_metrics_port": "10.0.0.7:9100",
		// The env block is interpolated and overrides NOMAD_*; Extra overrides it.
		"LISTEN": "10.0.0.7:23456", "DIR": "/srv/client-1", "NOMAD_DC": "mine", "FROM_TEMPLATE": "1",
	}
	if got := env.Vars(); !reflect.DeepEqual(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s = %q", k, v)
			}
		}
	}
	if got := env.Replace("${NOMAD_ADDR_http} ${attr.kernel.name}"); got != "10.0.0.7:23456 linux" {
		t.Fatalf("Replace after Build: %q", got)
	}
}
