package periodic_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/periodic"
)

func TestNext(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		name  string
		p     events.PeriodicConfig
		after string
		want  string // RFC 3339; "" for an error
	}{
		{"every 15 minutes", events.PeriodicConfig{Spec: "*/15 * * * *"}, "2024-01-05T10:07:00Z", "2024-01-05T10:15:00Z"},
		{"strictly after", events.PeriodicConfig{Spec: "*/15 * * * *"}, "2024-01-05T10:15:00Z", "2024-01-05T10:30:00Z"},
		{"hourly", events.PeriodicConfig{Spec: "@hourly"}, "2024-01-05T10:07:00Z", "2024-01-05T11:00:00Z"},
		{"daily", events.PeriodicConfig{Spec: "@daily"}, "2024-01-05T10:07:00Z", "2024-01-06T00:00:00Z"},
		{"weekdays at 9 in New York", events.PeriodicConfig{Spec: "0 9 * * 1-5", TimeZone: "America/New_York"},
			"2024-01-05T15:00:00Z", "2024-01-08T14:00:00Z"},
		{"daily in Tokyo", events.PeriodicConfig{Spec: "@daily", TimeZone: "Asia/Tokyo"}, "2024-01-05T10:07:00Z", "2024-01-05T15:00:00Z"},
		{"earliest of crons", events.PeriodicConfig{Specs: []string{"0 12 * * *", "30 10 * * *"}}, "2024-01-05T10:07:00Z", "2024-01-05T10:30:00Z"},
		{"names", events.PeriodicConfig{Spec: "0 0 1 JAN *"}, "2024-01-05T10:07:00Z", "2025-01-01T00:00:00Z"},
		{"DST spring forward", events.PeriodicConfig{Spec: "30 2 * * *", TimeZone: "Europe/Berlin"}, "2024-03-30T02:00:00Z", "2024-04-01T00:30:00Z"},
		{"bad spec", events.PeriodicConfig{Spec: "every day"}, "2024-01-05T10:07:00Z", ""},
		{"seven fields", events.PeriodicConfig{Spec: "0 0 0 * * * 2030"}, "2024-01-05T10:07:00Z", ""},
		{"bad zone", events.PeriodicConfig{Spec: "@daily", TimeZone: "Mars/Olympus"}, "2024-01-05T10:07:00Z", ""},
		{"no spec", events.PeriodicConfig{}, "2024-01-05T10:07:00Z", ""},
		{"never", events.PeriodicConfig{Spec: "0 0 30 2 *"}, "2024-01-05T10:07:00Z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := periodic.Next(&tc.p, utc(tc.after))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Next = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := utc(tc.want); !got.Equal(want) {
				t.Fatalf("Next = %v, want %v", got.UTC(), want)
			}
		})
	}
}
