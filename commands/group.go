package commands

import "context"

// Grouped is one command of a group (Pipeline.RunGroup).
type Grouped struct {
	// Name names the command, as Run's name does.
	Name string
	// Req identifies the command, as Run's req does.
	Req Request
	// Cmd is the command.
	Cmd Command
}

// RunGroup runs cmds and returns each one's outcome and error, in order.
// Each command stands on its own: one refused (invalid, in conflict)
// does not refuse the others, and each is checked at apply after the
// ones before it in cmds, so its preconditions see their effects.
func (p *Pipeline) RunGroup(ctx context.Context, cmds []Grouped) ([]Outcome, []error) {
	outs := make([]Outcome, len(cmds))
	errs := make([]error, len(cmds))
	for i, g := range cmds {
		outs[i], errs[i] = p.Run(ctx, g.Name, g.Req, g.Cmd)
	}
	return outs, errs
}
