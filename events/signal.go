package events

import "strings"

// killSignals are the signal names a task's kill_signal may name, with
// their Linux numbers: the jobspec checks names, the client's drivers send
// the numbers.
var killSignals = map[string]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGKILL": 9,
	"SIGUSR1": 10, "SIGUSR2": 12, "SIGTERM": 15,
}

// KillSignal returns the canonical name and Linux number of a kill signal
// name: SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2 or SIGTERM, in
// any case, with or without the SIG prefix; "" is SIGTERM, the default.
// ok is false for any other name.
func KillSignal(name string) (canonical string, number int, ok bool) {
	if name == "" {
		return "SIGTERM", killSignals["SIGTERM"], true
	}
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	number, ok = killSignals[n]
	return n, number, ok
}
