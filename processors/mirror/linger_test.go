package mirror

import (
	"errors"
	"testing"
	"time"
)

// TestLingerFromSettings: the agent file's mirror.linger (Settings.Linger)
// is the pacing the mirror runs with; unset it is the default, and one
// over MaxLinger is refused naming the field.
func TestLingerFromSettings(t *testing.T) {
	l := newLog(t)
	k := startKafka(t)
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, DefaultConfig().Linger}, {50 * time.Millisecond, 50 * time.Millisecond}} {
		m := newMirror(t, l, k.ListenAddrs(), func(c *Config) { c.Settings.Linger = tc.set })
		if m.cfg.Linger != tc.want {
			t.Errorf("linger %v: mirror paces by %v, want %v", tc.set, m.cfg.Linger, tc.want)
		}
		m.Close()
	}
	_, err := New(Config{Settings: Settings{Brokers: k.ListenAddrs(), Linger: 2 * time.Second},
		Store: l.store, Applied: l.notify.Applied})
	var se *SettingsError
	if !errors.As(err, &se) || se.Field != "mirror.linger" {
		t.Fatalf("linger 2s: err %v, want a SettingsError naming mirror.linger", err)
	}
}
