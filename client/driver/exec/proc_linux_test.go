package exec

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in    string
		state byte
		ticks uint64
		bad   bool
	}{
		{in: "42 (sleep) S 1 42 42 0 -1 4194560 99 0 0 0 0 0 0 0 20 0 1 0 123456 2498560 184 18446744073709551615", state: 'S', ticks: 123456},
		{in: "7 (a (b) ) c) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", state: 'Z', ticks: 99},
		{in: "7 (sleep S 1", bad: true},
		{in: "7 (x) S 1 2 3", bad: true},
		{in: "7 (x) S 1 42 42 0 -1 4194560 99 0 0 0 0 0 0 0 20 0 1 0 nope 0", bad: true},
	} {
		got, err := parseStat(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseStat(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got.state != tc.state || got.startTicks != tc.ticks {
			t.Errorf("parseStat(%q) = %+v, %v; want state %c ticks %d", tc.in, got, err, tc.state, tc.ticks)
		}
	}
}

func TestProcStatSelf(t *testing.T) {
	info, err := procStat(os.Getpid())
	if err != nil || info.exited() || info.startTicks == 0 {
		t.Fatalf("procStat(self) = %+v, %v", info, err)
	}
	if _, err := procStat(1 << 30); err != errNoProcess {
		t.Fatalf("procStat(no such pid) = %v, want errNoProcess", err)
	}
}
