package exec

import (
	"context"
	"errors"
	osexec "os/exec"

	"github.com/ordoplane/ordo/client/driver"
)

// execTTY runs cmd on a pseudo-terminal.
func (h *handle) execTTY(ctx context.Context, cmd *osexec.Cmd, req driver.ExecRequest) (int, error) {
	return -1, &driver.ConfigError{Key: "tty", Reason: errors.New("terminals are not supported; run without -t").Error()}
}
