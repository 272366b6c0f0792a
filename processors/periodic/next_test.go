package periodic_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/periodic"
)

func TestNext(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	noLaunch := errors.New("want ErrNoLaunch")
	for _, tc := range []struct {
		name  string
		p     events.PeriodicConfig
		after string
		want  string // RFC 3339; "" for an error
		err   error  // with want "": the error to match, nil for any
	}{
		// Five fields: minute, hour, day of month, month, day of week.
		{name: "every 15 minutes", p: events.PeriodicConfig{Spec: "*/15 * * * *"}, after: "2024-01-05T10:07:00Z", want: "2024-01-05T10:15:00Z"},
		{name: "strictly after", p: events.PeriodicConfig{Spec: "*/15 * * * *"}, after: "2024-01-05T10:15:00Z", want: "2024-01-05T10:30:00Z"},
		{name: "strictly after, within the second", p: events.PeriodicConfig{Spec: "*/15 * * * *"}, after: "2024-01-05T10:15:00.5Z", want: "2024-01-05T10:30:00Z"},
		{name: "names", p: events.PeriodicConfig{Spec: "0 0 1 JAN *"}, after: "2024-01-05T10:07:00Z", want: "2025-01-01T00:00:00Z"},
		{name: "day names", p: events.PeriodicConfig{Spec: "0 9 * * MON-FRI"}, after: "2024-01-05T10:07:00Z", want: "2024-01-08T09:00:00Z"},
		{name: "last day of month", p: events.PeriodicConfig{Spec: "0 0 L * *"}, after: "2024-02-05T10:07:00Z", want: "2024-02-29T00:00:00Z"},
		{name: "nearest weekday", p: events.PeriodicConfig{Spec: "0 0 15W * ?"}, after: "2024-06-01T00:00:00Z", want: "2024-06-14T00:00:00Z"},
		{name: "sunday is 0 or 7", p: events.PeriodicConfig{Spec: "0 0 * * 7"}, after: "2024-01-06T00:00:00Z", want: "2024-01-07T00:00:00Z"},
		// cronexpr, so Nomad, reads a weekday range ending on Sunday as
		// ending on Saturday: FRI-SUN is Friday and Saturday.
		{name: "a range to sunday stops at saturday", p: events.PeriodicConfig{Spec: "0 0 * * FRI-SUN"}, after: "2024-01-06T00:00:00Z", want: "2024-01-12T00:00:00Z"},
		{name: "second friday", p: events.PeriodicConfig{Spec: "0 0 * * 5#2"}, after: "2024-01-05T10:07:00Z", want: "2024-01-12T00:00:00Z"},
		// Six fields: a year appended.
		{name: "six fields end in a year", p: events.PeriodicConfig{Spec: "0 12 * * * 2030"}, after: "2024-01-05T10:07:00Z", want: "2030-01-01T12:00:00Z"},
		{name: "a year that has passed", p: events.PeriodicConfig{Spec: "0 12 * * * 2020"}, after: "2024-01-05T10:07:00Z", err: noLaunch},
		// Seven fields: a second prepended too.
		{name: "seven fields", p: events.PeriodicConfig{Spec: "0 0 0 * * * 2030"}, after: "2024-01-05T10:07:00Z", want: "2030-01-01T00:00:00Z"},
		{name: "seconds", p: events.PeriodicConfig{Spec: "*/20 * * * * * *"}, after: "2024-01-05T10:07:45Z", want: "2024-01-05T10:08:00Z"},
		{name: "at a second", p: events.PeriodicConfig{Spec: "30 0 12 * * * *"}, after: "2024-01-05T10:07:00Z", want: "2024-01-05T12:00:30Z"},
		// Shorthands.
		{name: "hourly", p: events.PeriodicConfig{Spec: "@hourly"}, after: "2024-01-05T10:07:00Z", want: "2024-01-05T11:00:00Z"},
		{name: "daily", p: events.PeriodicConfig{Spec: "@daily"}, after: "2024-01-05T10:07:00Z", want: "2024-01-06T00:00:00Z"},
		{name: "weekly", p: events.PeriodicConfig{Spec: "@weekly"}, after: "2024-01-05T10:07:00Z", want: "2024-01-07T00:00:00Z"},
		{name: "monthly", p: events.PeriodicConfig{Spec: "@monthly"}, after: "2024-01-05T10:07:00Z", want: "2024-02-01T00:00:00Z"},
		{name: "yearly", p: events.PeriodicConfig{Spec: "@yearly"}, after: "2024-01-05T10:07:00Z", want: "2025-01-01T00:00:00Z"},
		{name: "annually", p: events.PeriodicConfig{Spec: "@annually"}, after: "2024-01-05T10:07:00Z", want: "2025-01-01T00:00:00Z"},
		{name: "midnight is not Nomad's", p: events.PeriodicConfig{Spec: "@midnight"}, after: "2024-01-05T10:07:00Z"},
		{name: "every is not Nomad's", p: events.PeriodicConfig{Spec: "@every 1h"}, after: "2024-01-05T10:07:00Z"},
		// Time zones.
		{name: "weekdays at 9 in New York", p: events.PeriodicConfig{Spec: "0 9 * * 1-5", TimeZone: "America/New_York"},
			after: "2024-01-05T15:00:00Z", want: "2024-01-08T14:00:00Z"},
		{name: "daily in Tokyo", p: events.PeriodicConfig{Spec: "@daily", TimeZone: "Asia/Tokyo"}, after: "2024-01-05T10:07:00Z", want: "2024-01-05T15:00:00Z"},
		// 02:30 does not exist on 31 March in Berlin: the next is 1 April's.
		{name: "DST spring forward", p: events.PeriodicConfig{Spec: "30 2 * * *", TimeZone: "Europe/Berlin"}, after: "2024-03-30T02:00:00Z", want: "2024-04-01T00:30:00Z"},
		// 02:30 happens twice on 27 October in Berlin; cronexpr, so Nomad,
		// launches at both.
		{name: "DST fall back, first", p: events.PeriodicConfig{Spec: "30 2 * * *", TimeZone: "Europe/Berlin"}, after: "2024-10-26T02:00:00Z", want: "2024-10-27T00:30:00Z"},
		{name: "DST fall back, second", p: events.PeriodicConfig{Spec: "30 2 * * *", TimeZone: "Europe/Berlin"}, after: "2024-10-27T00:30:00Z", want: "2024-10-27T01:30:00Z"},
		// crons: the earliest of them.
		{name: "earliest of crons", p: events.PeriodicConfig{Specs: []string{"0 12 * * *", "30 10 * * *"}}, after: "2024-01-05T10:07:00Z", want: "2024-01-05T10:30:00Z"},
		{name: "crons of every shape", p: events.PeriodicConfig{Specs: []string{"@daily", "0 0 0 6 1 * 2024", "0 23 * * * 2024"}},
			after: "2024-01-05T10:07:00Z", want: "2024-01-05T23:00:00Z"},
		{name: "crons in a time zone", p: events.PeriodicConfig{Specs: []string{"0 9 * * *", "0 18 * * *"}, TimeZone: "Asia/Tokyo"},
			after: "2024-01-05T01:00:00Z", want: "2024-01-05T09:00:00Z"},
		{name: "crons skip one that never launches", p: events.PeriodicConfig{Specs: []string{"0 0 30 2 *", "@monthly"}}, after: "2024-01-05T10:07:00Z", want: "2024-02-01T00:00:00Z"},
		{name: "crons with a bad one", p: events.PeriodicConfig{Specs: []string{"@daily", "61 * * * *"}}, after: "2024-01-05T10:07:00Z"},
		// Errors.
		{name: "bad spec", p: events.PeriodicConfig{Spec: "every day"}, after: "2024-01-05T10:07:00Z"},
		{name: "minute out of range", p: events.PeriodicConfig{Spec: "60 * * * *"}, after: "2024-01-05T10:07:00Z"},
		{name: "bad zone", p: events.PeriodicConfig{Spec: "@daily", TimeZone: "Mars/Olympus"}, after: "2024-01-05T10:07:00Z"},
		{name: "no spec", p: events.PeriodicConfig{}, after: "2024-01-05T10:07:00Z"},
		// Refused at registration; were one in the log from before, Next
		// must neither hang (an empty seconds list) nor panic (an empty
		// month list) in cronexpr.
		{name: "backwards seconds", p: events.PeriodicConfig{Spec: "59-0 * * * * * *"}, after: "2024-01-05T10:07:00Z"},
		{name: "backwards months", p: events.PeriodicConfig{Spec: "0 0 * dec-jan *"}, after: "2024-01-05T10:07:00Z"},
		{name: "never", p: events.PeriodicConfig{Spec: "0 0 30 2 *"}, after: "2024-01-05T10:07:00Z", err: noLaunch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := periodic.Next(&tc.p, utc(tc.after))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Next = %v, want an error", got)
				}
				if tc.err == noLaunch && !errors.Is(err, periodic.ErrNoLaunch) {
					t.Fatalf("Next: %v, want ErrNoLaunch", err)
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
