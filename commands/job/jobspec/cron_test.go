package jobspec_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job/jobspec"
)

// TestParseCron: periodic specs are accepted as Nomad (hashicorp/cronexpr)
// accepts them, except what can never run.
func TestParseCron(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		reason string // "" when accepted
	}{
		{"*/15 * * * *", ""},
		{"0 9 * * MON-FRI", ""},
		{"0 9 * * 1-5", ""},
		{"0 0 * * 5-7", ""}, // 7 is Sunday
		{"0 0 * * FRI-SUN", ""},
		{"0 0 1 jan,jul *", ""},
		{"0 0 L * ?", ""},
		{"0 0 15W * *", ""},
		{"0 0 * * 5#2", ""},
		{"0 0 * * 5L", ""},
		{"0 12 * * * 2030", ""},    // six fields: a year appended
		{"30 0 12 * * * 2030", ""}, // seven: a second prepended too
		{"*/10 * * * * * *", ""},   // every ten seconds
		{"0-30/10 * * * *", ""},    // a range with a step
		{"  @daily ", ""},          // shorthands, spaces around them
		{"@hourly", ""},
		{"@weekly", ""},
		{"@monthly", ""},
		{"@yearly", ""},
		{"@annually", ""},
		{"@midnight", "want 5 to 7"}, // robfig's, not Nomad's
		{"@every 1h", "want 5 to 7"},
		{"@daily 0", "want 5 to 7"},
		{"every day", "has 2 fields"},
		{"* * * *", "has 4 fields"},
		{"0 0 0 * * * 2030 x", "has 8 fields"}, // cronexpr would ignore the eighth
		{"60 * * * *", "minute"},
		{"* 24 * * *", "hour"},
		{"*/0 * * * *", "interval"},
		{"0 0 * * 8", "day-of-week"},
		{"0 0 0 * * * 1969", "year"},
		{"5-1 * * * *", "backwards"},                 // nothing ever matches
		{"59-0 * * * * * *", "second field is back"}, // cronexpr's Next never returns
		{"0 0 * dec-jan *", "month field is back"},   // cronexpr's Next panics
		{"0 0 * * SAT-MON", "backwards"},
		{"0 0 20-10/2 * *", "backwards"},
		{"0 0 * * * 2030-2025", "backwards"},
	} {
		_, err := jobspec.ParseCron(tc.spec)
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("ParseCron(%q) = %v, want it accepted", tc.spec, err)
		case tc.reason != "" && (err == nil || !strings.Contains(err.Error(), tc.reason)):
			t.Errorf("ParseCron(%q) = %v, want an error mentioning %q", tc.spec, err, tc.reason)
		}
	}
}

// TestPeriodicValidation: registration refuses a bad cron expression with
// a 400 naming the periodic field it came in, in HCL and in JSON.
func TestPeriodicValidation(t *testing.T) {
	periodicJSON := func(p map[string]any) string {
		b, _ := json.Marshal(map[string]any{"Job": map[string]any{
			"ID": "report", "Type": "batch", "Periodic": p,
			"TaskGroups": []any{map[string]any{"Name": "g", "Tasks": []any{map[string]any{"Name": "t", "Driver": "exec"}}}},
		}})
		return string(b)
	}
	for _, tc := range []struct {
		name, hcl    string
		json         map[string]any
		field        string // "" when accepted
		reason, spec string
	}{
		{name: "cron", hcl: `cron = "0 3 * * *"`, json: map[string]any{"Spec": "0 3 * * *"}},
		{name: "crons", hcl: `crons = ["0 3 * * *", "30 0 12 * * * 2030", "@hourly"]`,
			json: map[string]any{"Specs": []string{"0 3 * * *", "30 0 12 * * * 2030", "@hourly"}}},
		{name: "time zone", hcl: "cron = \"@daily\"\n    time_zone = \"Europe/Berlin\"",
			json: map[string]any{"Spec": "@daily", "TimeZone": "Europe/Berlin"}},
		{name: "bad cron", hcl: `cron = "61 * * * *"`, json: map[string]any{"Spec": "61 * * * *"},
			field: "job.periodic.cron", reason: "minute", spec: "61 * * * *"},
		{name: "backwards cron", hcl: `cron = "0 0 * * 5-1"`, json: map[string]any{"Spec": "0 0 * * 5-1"},
			field: "job.periodic.cron", reason: "backwards", spec: "0 0 * * 5-1"},
		{name: "bad one of crons", hcl: `crons = ["@daily", "@midnight"]`, json: map[string]any{"Specs": []string{"@daily", "@midnight"}},
			field: "job.periodic.crons", reason: "fields", spec: "@midnight"},
		{name: "bad zone", hcl: "cron = \"@daily\"\n    time_zone = \"Mars/Olympus\"",
			json: map[string]any{"Spec": "@daily", "TimeZone": "Mars/Olympus"}, field: "job.periodic.time_zone", reason: "time zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, herr := jobspec.ParseHCL("spec.hcl", []byte(job("batch", "  periodic {\n    "+tc.hcl+"\n  }", "", "")))
			_, jerr := jobspec.ParseJSON(strings.NewReader(periodicJSON(tc.json)), 1<<20)
			for form, err := range map[string]error{"HCL": herr, "JSON": jerr} {
				if tc.field == "" {
					if err != nil {
						t.Errorf("%s: %v, want it accepted", form, err)
					}
					continue
				}
				var ve *commands.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s: err = %v (%T), want *commands.ValidationError", form, err, err)
				}
				if ve.Field != tc.field || !strings.Contains(ve.Reason, tc.reason) || !strings.Contains(ve.Reason, tc.spec) {
					t.Errorf("%s: %q: %q, want %q mentioning %q and %q", form, ve.Field, ve.Reason, tc.field, tc.reason, tc.spec)
				}
			}
		})
	}
}
