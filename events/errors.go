package events

import "errors"

// ErrUnknownType is returned when an event names a type the registry lacks.
var ErrUnknownType = errors.New("ordo: unknown event type")

// ErrFutureVersion is returned for an event written by a newer ordo than this one.
var ErrFutureVersion = errors.New("ordo: event version newer than this build")
