// Package nettest holds the tests' network helpers: addresses to dial
// that nothing answers.
//
// # Usage
//
//	c, _ := api.New([]string{nettest.ClosedAddr(t), good.URL})
//
// # Concurrency
//
// ClosedAddr is safe to call from any goroutine; it fails t with
// t.Fatal, so belongs on the test goroutine.
//
// # Invariants
//
//   - A closed address is a loopback port that was free when asked for:
//     a dial to it is refused rather than left to time out.
//
// It sits under storage, the lowest layer, so that tests of every layer
// may import it (tools/lint's import rule).
package nettest
