//go:build !linux

package fingerprint

import "errors"

var errUnsupported = errors.New("fingerprint: not supported on this system")

func diskSpace(string) (free, total uint64, err error) { return 0, 0, errUnsupported }
