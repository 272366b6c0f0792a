package launcher

import (
	lcmd "github.com/ordoplane/ordo/commands/launcher"
)

// A pass's commands go to the pipeline in groups (Pipeline.RunGroup: one
// entry), not one entry each. A group's commands are decided against one
// view, before any of them applies, and each is checked at apply after
// the ones before it. So a command that must be decided on another's
// effect waits for the next group: the batcher submits the queued group
// before a command that touches a request or instance a queued one
// touches, and a step that needs a queued step's outcome (the next step
// of the same request) is only handed over once that outcome is known.

// queued is a command step waiting for its group.
type queued struct {
	s    step
	then func(err error)
}

// batcher queues a pass's command steps and submits them a group at a
// time. submit runs one group and returns each step's error, in order.
type batcher struct {
	submit func(group []step) []error
	q      []queued
	// keys are what the queued commands touch (stepKeys).
	keys map[string]struct{}
}

func newBatcher(submit func(group []step) []error) *batcher {
	return &batcher{submit: submit, keys: map[string]struct{}{}}
}

// add queues s, whose outcome goes to then when its group is submitted;
// a queued command touching what s touches is submitted first.
func (b *batcher) add(s step, then func(err error)) {
	keys := stepKeys(s)
	for _, k := range keys {
		if _, ok := b.keys[k]; ok {
			b.flush()
			break
		}
	}
	b.q = append(b.q, queued{s: s, then: then})
	for _, k := range keys {
		b.keys[k] = struct{}{}
	}
}

// flush submits the queued group and reports each outcome; steps queued
// by those reports go in the next group, until none is left.
func (b *batcher) flush() {
	for len(b.q) > 0 {
		q := b.q
		b.q = nil
		clear(b.keys)
		group := make([]step, len(q))
		for i := range q {
			group[i] = q[i].s
		}
		errs := b.submit(group)
		for i := range q {
			q[i].then(errs[i])
		}
	}
}

// stepKeys names the requests and instances a step's command reads or
// changes at decide time: two commands sharing one are never in one
// group. A pause names none: it reads nothing, and the group keeps the
// order of several.
func stepKeys(s step) []string {
	var keys []string
	req := func(id string) { keys = append(keys, "request\x00"+id) }
	inst := func(id string) { keys = append(keys, "instance\x00"+id) }
	switch c := s.cmd.(type) {
	case *lcmd.Accept:
		req(c.RequestID)
		for _, a := range c.Assign {
			inst(a.InstanceID)
		}
	case *lcmd.Launch:
		req(c.RequestID)
	case lcmd.Decline:
		req(c.RequestID)
	case lcmd.Fail:
		req(c.RequestID)
	case lcmd.Release:
		req(c.RequestID)
	case lcmd.SetInstanceState:
		inst(c.ID)
	case lcmd.RemoveInstance:
		inst(c.ID)
	case lcmd.ReturnHost:
		inst(c.ID)
	}
	if s.req != nil {
		req(s.req.ID)
	}
	if s.about != "" {
		// An instance turning ready reads its request and the request's
		// other instances (it fulfils the request with the last one).
		req(s.about)
	}
	return keys
}
