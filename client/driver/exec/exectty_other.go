//go:build !linux

package exec

import (
	"context"
	osexec "os/exec"

	"github.com/ordoplane/ordo/client/driver"
)

// execTTY runs cmd on a pseudo-terminal: only on Linux.
func (h *handle) execTTY(ctx context.Context, cmd *osexec.Cmd, req driver.ExecRequest) (int, error) {
	return -1, &driver.ConfigError{Key: "tty", Reason: "terminals need Linux"}
}
