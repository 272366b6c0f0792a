package commands

import "github.com/google/uuid"

// NewUUID mints a random id in the shape of Nomad's ids: a version 4 UUID,
// 36 characters of 8-4-4-4-12 hex digits. It is random from its first
// character, so the 8-character short ids the CLI shows tell ids apart (a
// time-ordered layout would share its leading characters for a minute).
// It is the pipeline's default IDs; the scheduler derives the ids of what
// it places in the same shape (scheduler.DeriveID), so every eval,
// allocation and deployment id looks alike.
func NewUUID() string { return uuid.NewString() }
