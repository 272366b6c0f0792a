// Package defaults fills a processor Config's zero fields from its
// DefaultConfig, so every processor's constructor reads the same way:
//
// # Usage
//
//	func New(cfg Config) (*Processor, error) {
//		defaults.Fill(&cfg, DefaultConfig())
//		if err := cfg.Validate(); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// # Concurrency
//
// Fill touches only the Config it is given.
//
// # Invariants
//
//   - Only zero fields change, and only to the default's value; a field
//     set by the caller (a negative duration included) is left for
//     Validate to judge.
//   - A bool field whose default is true could never be turned off, so
//     DefaultConfig leaves every bool false.
package defaults
