package mock

import "github.com/ordoplane/ordo/client/clock"

// Clock is the driver's only source of time (the client's clock type), so
// tests drive tasks with a fake clock.
type Clock = clock.Clock

// Timer is a one-shot timer made by a Clock.
type Timer = clock.Timer

// SystemClock is the real clock.
type SystemClock = clock.System
