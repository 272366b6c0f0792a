//go:build !unix

package fleet

// raiseFDLimit does nothing where there is no RLIMIT_NOFILE.
func raiseFDLimit(need uint64) error { return nil }
