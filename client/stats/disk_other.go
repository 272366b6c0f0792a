//go:build !linux

package stats

import "github.com/ordoplane/ordo/api"

func diskStats(device, path string) (*api.HostDiskStats, error) { return nil, ErrUnsupported }
