package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	ordoapi "github.com/ordoplane/ordo/api"
)

func TestNormalizeArgs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", []string{}, []string{}},
		{"single-dash long flag", []string{"namespace", "list", "-json"}, []string{"namespace", "list", "--json"}},
		{"flag then value", []string{"-description", "x", "web"}, []string{"--description", "x", "web"}},
		{"flag=value", []string{"-data-dir=d1"}, []string{"--data-dir=d1"}},
		{"flag=value with dashes", []string{"-description=-x-"}, []string{"--description=-x-"}},
		{"double dash kept", []string{"--json", "--data-dir", "d1"}, []string{"--json", "--data-dir", "d1"}},
		{"shorthand kept", []string{"-h", "-v"}, []string{"-h", "-v"}},
		{"lone dash kept", []string{"-"}, []string{"-"}},
		{"negative integer kept", []string{"-bootstrap-expect", "-10"}, []string{"--bootstrap-expect", "-10"}},
		{"negative decimal kept", []string{"-1.5", "-.5", "-1e3"}, []string{"-1.5", "-.5", "-1e3"}},
		{"inf and nan are flags", []string{"-inf", "-nan"}, []string{"--inf", "--nan"}},
		{"digit but not a number", []string{"-1abc"}, []string{"--1abc"}},
		{"stop at bare double dash", []string{"-json", "--", "-json", "-x=1"}, []string{"--json", "--", "-json", "-x=1"}},
		{"positional untouched", []string{"web", "a=b"}, []string{"web", "a=b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := normalizeArgs(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("normalizeArgs(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !slices.Equal(tt.in, in) {
				t.Errorf("normalizeArgs modified its input: %q", tt.in)
			}
		})
	}
}

func TestDefaultAddress(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := defaultAddress(getenv); got != defaultAddr {
		t.Errorf("unset: got %q, want %q", got, defaultAddr)
	}
	env["ORDO_ADDR"] = "http://10.0.0.1:4646"
	if got := defaultAddress(getenv); got != "http://10.0.0.1:4646" {
		t.Errorf("set: got %q", got)
	}
}

// fakeAPI records requests and answers them with a fixed status and body.
type fakeAPI struct {
	status int
	answer string
	method string
	uri    string
	body   []byte
}

func (f *fakeAPI) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.method, f.uri = r.Method, r.URL.RequestURI()
		f.body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		io.WriteString(w, f.answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunShowsAPIError(t *testing.T) {
	api := &fakeAPI{status: 404, answer: `{"Error":"namespace \"nope\" not found","Status":404}`}
	addr := api.start(t)
	code, stdout, stderr := runCLI("namespace", "status", "-address", addr, "nope")
	if code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
	if want := "Error: namespace \"nope\" not found\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if api.uri != "/v1/namespace/nope" {
		t.Errorf("request URI = %q", api.uri)
	}
}

func TestRunNonJSONError(t *testing.T) {
	api := &fakeAPI{status: 502, answer: "bad gateway"}
	addr := api.start(t)
	code, _, stderr := runCLI("-address="+addr, "namespace", "list")
	if code != 1 || stderr != "Error: unexpected response 502: bad gateway\n" {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
}

func TestRunNamespaceApplyFlags(t *testing.T) {
	for _, args := range [][]string{
		{"namespace", "apply", "-description", "web team", "-meta", "owner=ann", "-meta=tier=1", "web"},
		{"namespace", "apply", "--description=web team", "--meta", "owner=ann", "--meta", "tier=1", "web"},
	} {
		// The GET of the existing namespace gets this answer too; its
		// fields are overridden by the flags.
		api := &fakeAPI{status: 200, answer: `{"Name":"web","Description":"old","Meta":{"x":"y"}}`}
		addr := api.start(t)
		code, stdout, stderr := runCLI(append([]string{"-address", addr}, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
		}
		if want := "Successfully applied namespace \"web\"!\n"; stdout != want {
			t.Errorf("%q: stdout = %q, want %q", args, stdout, want)
		}
		if api.method != http.MethodPut || api.uri != "/v1/namespace/web" {
			t.Errorf("%q: last request %s %s", args, api.method, api.uri)
		}
		var got ordoapi.NamespaceRequest
		if err := json.Unmarshal(api.body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Name != "web" || got.Description != "web team" || len(got.Meta) != 2 ||
			got.Meta["owner"] != "ann" || got.Meta["tier"] != "1" {
			t.Errorf("%q: body = %+v", args, got)
		}
	}
}

func TestRunNamespaceApplyKeepsUnsetFields(t *testing.T) {
	api := &fakeAPI{status: 200, answer: `{"Name":"web","Description":"old","Meta":{"x":"y"}}`}
	addr := api.start(t)
	if code, _, stderr := runCLI("namespace", "apply", "-address", addr, "-meta", "a=b", "web"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got ordoapi.NamespaceRequest
	if err := json.Unmarshal(api.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Description != "old" || len(got.Meta) != 1 || got.Meta["a"] != "b" {
		t.Errorf("body = %+v, want the old description and only the new meta", got)
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"namespace", "status"}, "Error: this command takes one argument: <name>\n"},
		{[]string{"namespace", "apply", "-meta", "novalue", "web"}, "Error: invalid -meta \"novalue\": want key=value\n"},
		{[]string{"agent", "-log-level", "loud"}, "Error: -log-level: unknown log level \"loud\"; want debug, info, warn or error\n"},
		{[]string{"agent"}, "Error: agent: -data-dir is required outside -dev\n"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(tt.args...)
		if code != 1 || stderr != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want 1, %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestRunVersion(t *testing.T) {
	code, stdout, _ := runCLI("version")
	if code != 0 || !strings.HasPrefix(stdout, "ordo v") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	code, stdout, _ = runCLI("-version")
	if code != 0 || !strings.HasPrefix(stdout, "ordo v") {
		t.Errorf("-version: exit %d, stdout %q", code, stdout)
	}
}
