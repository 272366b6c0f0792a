package jobspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

func addExamples(f *testing.F, ext string) {
	paths, _ := filepath.Glob(filepath.Join(examples, "*"+ext))
	for _, p := range paths {
		if notJobspecs[filepath.Base(p)] {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
}

// checkParsed holds for whatever a parser returns: a valid job that
// survives the event codec and JSON, or a ValidationError.
func checkParsed(t *testing.T, job *events.Job, err error) {
	if err != nil {
		var ve *commands.ValidationError
		var tl *commands.TooLargeError
		if !errors.As(err, &ve) && !errors.As(err, &tl) {
			t.Fatalf("error %v (%T) is not a ValidationError", err, err)
		}
		if ve != nil && ve.Field == "" {
			t.Fatalf("error %v names no field", err)
		}
		return
	}
	if err := jobspec.Validate(job); err != nil {
		t.Fatalf("parsed job fails Validate: %v", err)
	}
	roundTrip(t, job)
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	again, err := jobspec.ParseJSON(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("canonical JSON does not parse: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(again, job) {
		t.Fatalf("canonical JSON parses to another job:\n%+v\n%+v", again, job)
	}
}

func FuzzParseHCL(f *testing.F) {
	addExamples(f, ".hcl")
	f.Add([]byte(`job "x" { group "g" { task "t" { driver = "exec" config { a = [1, 2.5, {b = null}] } } } }`))
	f.Add([]byte(`job "x" { constraint { attribute = "${attr.a[\"b\"]}" value = "${node.x}" } }`))
	f.Add([]byte(servicesHCL))
	f.Add([]byte(`job "x" { group "g" { network { port "a" { static = 80 } port "b" {} }
service { port = "b" check { type = "http" path = "/" interval = "1s" timeout = "1s" } }
task "t" { driver = "exec" template { data = "{{ env \"NOMAD_PORT_a\" }}" destination = "local/a" } } } }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		job, err := jobspec.ParseHCL("fuzz.hcl", src)
		if err != nil && !strings.Contains(err.Error(), "fuzz.hcl") {
			t.Fatalf("error %v does not point into the file", err)
		}
		checkParsed(t, job, err)
	})
}

func FuzzParseJSON(f *testing.F) {
	addExamples(f, ".json")
	f.Add([]byte(`{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec", "Config": {"n": 1e300, "m": [-0.0]}}]}]}`))
	f.Add([]byte(`{"Job": {"ID": "x", "Type": "batch", "Periodic": {"Specs": ["@daily"]}}}`))
	f.Add([]byte(`{"ID": "x", "TaskGroups": [{"Name": "g", "Networks": [{"DynamicPorts": [{"Label": "http"}]}],
	  "Services": [{"PortLabel": "http", "Checks": [{"Type": "tcp", "Interval": 1000000000, "Timeout": 1000000000}]}],
	  "Tasks": [{"Name": "t", "Driver": "exec", "Templates": [{"EmbeddedTmpl": "x", "DestPath": "local/x"}]}]}]}`))
	if b, err := json.Marshal(servicesNomad()); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		job, err := jobspec.ParseJSON(bytes.NewReader(src), 1<<16)
		checkParsed(t, job, err)
	})
}
