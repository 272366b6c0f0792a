package jobspec_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// TestTemplateBlocks parses every attribute of template and change_script
// from HCL and from Nomad's JSON, and checks Nomad's defaults.
func TestTemplateBlocks(t *testing.T) {
	task := `      template {
        data        = <<EOT
PORT={{ env "NOMAD_PORT_http" }}
{{ range nomadService "db" }}DB={{ .Address }}:{{ .Port }}{{ end }}
EOT
        destination = "local/app.env"
        env         = true
      }
      template {
        source               = "local/app.conf.tpl"
        destination          = "${NOMAD_SECRETS_DIR}/app.conf"
        change_mode          = "signal"
        change_signal        = "sighup"
        splay                = "0s"
        perms                = "600"
        left_delimiter       = "[["
        right_delimiter      = "]]"
        error_on_missing_key = true
      }
      template {
        data        = "x"
        destination = "alloc/shared/x"
        change_mode = "script"
        change_script {
          command       = "/local/reload.sh"
          args          = ["-v"]
          timeout       = "20s"
          fail_on_error = true
        }
      }
      template {
        data        = "y"
        destination = "local/y"
        change_mode = "noop"
        change_script {
          command = "/bin/true"
        }
      }`
	data := "PORT={{ env \"NOMAD_PORT_http\" }}\n{{ range nomadService \"db\" }}DB={{ .Address }}:{{ .Port }}{{ end }}\n"
	nomad := nomadJob(func(_ *api.TaskGroup, t *api.Task) {
		t.Templates = []*api.Template{
			{EmbeddedTmpl: new(data), DestPath: new("local/app.env"), Envvars: new(true)},
			{SourcePath: new("local/app.conf.tpl"), DestPath: new("${NOMAD_SECRETS_DIR}/app.conf"), ChangeMode: new("signal"),
				ChangeSignal: new("sighup"), Splay: new(time.Duration(0)), Perms: new("600"), LeftDelim: new("[["),
				RightDelim: new("]]"), ErrMissingKey: new(true)},
			{EmbeddedTmpl: new("x"), DestPath: new("alloc/shared/x"), ChangeMode: new("script"),
				ChangeScript: &api.ChangeScript{Command: new("/local/reload.sh"), Args: []string{"-v"},
					Timeout: new(20 * time.Second), FailOnError: new(true)}},
			{EmbeddedTmpl: new("y"), DestPath: new("local/y"), ChangeMode: new("noop"),
				ChangeScript: &api.ChangeScript{Command: new("/bin/true")}},
		}
	})
	job := parseBoth(t, job2("", task), nomad)
	want := []events.Template{{
		EmbeddedTmpl: data, DestPath: "local/app.env", ChangeMode: "restart", Splay: 5 * time.Second, Perms: "0644",
		LeftDelim: "{{", RightDelim: "}}", Envvars: true,
	}, {
		SourcePath: "local/app.conf.tpl", DestPath: "${NOMAD_SECRETS_DIR}/app.conf", ChangeMode: "signal",
		ChangeSignal: "SIGHUP", Perms: "0600", LeftDelim: "[[", RightDelim: "]]", ErrMissingKey: true,
	}, {
		EmbeddedTmpl: "x", DestPath: "alloc/shared/x", ChangeMode: "script", Splay: 5 * time.Second, Perms: "0644",
		LeftDelim: "{{", RightDelim: "}}",
		ChangeScript: &events.ChangeScript{Command: "/local/reload.sh", Args: []string{"-v"}, Timeout: 20 * time.Second,
			FailOnError: true},
	}, {
		EmbeddedTmpl: "y", DestPath: "local/y", ChangeMode: "noop", Splay: 5 * time.Second, Perms: "0644",
		LeftDelim: "{{", RightDelim: "}}", ChangeScript: &events.ChangeScript{Command: "/bin/true", Timeout: 5 * time.Second},
	}}
	if got := job.TaskGroups[0].Tasks[0].Templates; !reflect.DeepEqual(got, want) {
		t.Fatalf("templates\n%+v\nwant\n%+v", got, want)
	}
}

func TestTemplateErrors(t *testing.T) {
	tmpl := func(body string) string { return job2("", "      template {\n"+body+"\n      }") }
	tmplAt := func(body string) string { return job2("", "      template {  # <-\n"+body+"\n      }") }
	checkErrCases(t, []errCase{
		{"no data or source", tmplAt(`        destination = "local/x"`), "job.group[g].task[t].template[0].data", "needs data or a source"},
		{"data and source", tmpl("        data = \"x\"\n        source = \"y\"  # <-\n        destination = \"local/x\""),
			"job.group[g].task[t].template[0].source", "not both"},
		{"no destination", tmplAt(`        data = "x"`), "job.group[g].task[t].template[0].destination", "needs a destination"},
		{"absolute destination", tmpl("        data = \"x\"\n        destination = \"/etc/x\"  # <-"),
			"job.group[g].task[t].template[0].destination", "is absolute"},
		{"escaping destination", tmpl("        data = \"x\"\n        destination = \"local/../../x\"  # <-"),
			"job.group[g].task[t].template[0].destination", "leaves the task directory"},
		{"escaping after variable", tmpl("        data = \"x\"\n        destination = \"${NOMAD_TASK_DIR}/../x\"  # <-"),
			"job.group[g].task[t].template[0].destination", "leaves the task directory"},
		{"directory destination", tmpl("        data = \"x\"\n        destination = \"local/\"  # <-"),
			"job.group[g].task[t].template[0].destination", "names a directory"},
		{"task directory destination", tmpl("        data = \"x\"\n        destination = \"secrets\"  # <-"),
			"job.group[g].task[t].template[0].destination", "names a directory"},
		{"same destination twice", job2("", "      template {\n        data = \"x\"\n        destination = \"local/x\"\n      }\n"+
			"      template {\n        data = \"y\"\n        destination = \"./local/x\"  # <-\n      }"),
			"job.group[g].task[t].template[1].destination", "also the destination of template[0]"},
		{"change mode", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"reload\"  # <-"),
			"job.group[g].task[t].template[0].change_mode", "not one of restart, signal, noop, script"},
		{"signal without signal", tmplAt("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"signal\""),
			"job.group[g].task[t].template[0].change_signal", "needs a change_signal"},
		{"bad signal", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"signal\"\n        change_signal = \"SIGWHAT\"  # <-"),
			"job.group[g].task[t].template[0].change_signal", "is not SIGHUP"},
		{"signal without mode", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_signal = \"SIGHUP\"  # <-"),
			"job.group[g].task[t].template[0].change_signal", "only used with change_mode \"signal\""},
		{"script without script", tmplAt("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"script\""),
			"job.group[g].task[t].template[0].change_script.command", "needs a change_script"},
		{"script timeout", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"script\"\n" +
			"        change_script {\n          command = \"/bin/true\"\n          timeout = \"-1s\"  # <-\n        }"),
			"job.group[g].task[t].template[0].change_script.timeout", "negative"},
		{"splay", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        splay = \"-1s\"  # <-"),
			"job.group[g].task[t].template[0].splay", "negative"},
		{"perms", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        perms = \"rw-r--r--\"  # <-"),
			"job.group[g].task[t].template[0].perms", "octal"},
		{"perms too big", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        perms = \"17777\"  # <-"),
			"job.group[g].task[t].template[0].perms", "octal"},
		{"unknown attribute", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        vault_grace = \"1s\"  # <-"),
			"job.group[g].task[t].template[0].vault_grace", "Unsupported argument"},
	})
}

// TestInterpolationInBlocks: runtime variables in config, env, args, meta,
// services, checks and templates pass through the parser as written, for
// the scheduler and the client to interpolate.
func TestInterpolationInBlocks(t *testing.T) {
	vars := []string{`${NOMAD_META_dir}`, `${node.unique.name}`, `${attr.kernel.name}`, `${env["HOME"]}`}
	all := strings.Join(vars, " ")
	hclText := all // quotes inside ${…} are HCL's own, not escaped
	src := `job "j" {
  meta {
    m = "` + hclText + `"
  }
  group "g" {
    meta {
      m = "` + hclText + `"
    }
    network {
      port "http" {}
    }
    service {
      name = "web-${NOMAD_META_dir}"
      port = "http"
      tags = ["` + hclText + `"]
      meta {
        m = "` + hclText + `"
      }
      check {
        type     = "http"
        port     = "http"
        path     = "/health?node=${node.unique.name}"
        interval = "10s"
        timeout  = "1s"
        header {
          X-Node = ["` + hclText + `"]
        }
      }
    }
    task "t" {
      driver = "exec"
      config {
        command = "${NOMAD_META_dir}/run"
        args    = ["` + hclText + `"]
      }
      env {
        E = "` + hclText + `"
      }
      meta {
        m = "` + hclText + `"
      }
      template {
        data        = "` + hclText + ` {{ env \"NOMAD_PORT_http\" }}"
        destination = "local/${node.unique.name}.conf"
      }
    }
  }
}`
	job, err := jobspec.ParseHCL("spec.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	task := tg.Tasks[0]
	svc := tg.Services[0]
	for what, got := range map[string]string{
		"job meta":        job.Meta["m"],
		"group meta":      tg.Meta["m"],
		"service tag":     svc.Tags[0],
		"service meta":    svc.Meta["m"],
		"check header":    svc.Checks[0].Header["X-Node"][0],
		"config args":     task.Config["args"].([]any)[0].(string),
		"env":             task.Env["E"],
		"task meta":       task.Meta["m"],
		"template data":   strings.TrimSuffix(task.Templates[0].EmbeddedTmpl, ` {{ env "NOMAD_PORT_http" }}`),
		"config command":  strings.TrimSuffix(task.Config["command"].(string), "/run") + " " + strings.Join(vars[1:], " "),
		"service name":    strings.TrimPrefix(svc.Name, "web-") + " " + strings.Join(vars[1:], " "),
		"check path":      vars[0] + " " + strings.TrimPrefix(svc.Checks[0].Path, "/health?node=") + " " + strings.Join(vars[2:], " "),
		"template target": vars[0] + " " + strings.TrimSuffix(strings.TrimPrefix(task.Templates[0].DestPath, "local/"), ".conf") + " " + strings.Join(vars[2:], " "),
	} {
		if got != all {
			t.Errorf("%s = %q, want %q", what, got, all)
		}
	}
}
