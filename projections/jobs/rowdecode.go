package jobs

import "github.com/ordoplane/ordo/events"

// The rows the projection reads back most — an allocation's reference,
// a job's summary and the head of a job's row — decode straight from
// their bytes (events.FieldDecoder), as reflection decodes them
// (FuzzRowDecoders holds them to it); any form these do not take goes to
// reflection.

var (
	_ events.FieldDecoder = (*allocRef)(nil)
	_ events.FieldDecoder = (*summaryRow)(nil)
	_ events.FieldDecoder = (*jobHead)(nil)
)

// DecodeFields implements events.FieldDecoder.
func (ref *allocRef) DecodeFields(r *events.FieldReader) bool {
	return r.Fields(func(key []byte) bool {
		switch string(key) {
		case "ns":
			return r.Str(&ref.Namespace)
		case "job":
			return r.Str(&ref.JobID)
		case "tg":
			return r.Str(&ref.Group)
		case "cs":
			return r.Str(&ref.ClientStatus)
		case "jci":
			return r.Uint(&ref.JobCreateIndex)
		}
		return r.Skip()
	})
}

// DecodeFields implements events.FieldDecoder.
func (s *summaryRow) DecodeFields(r *events.FieldReader) bool {
	return r.Fields(func(key []byte) bool {
		switch string(key) {
		case "g":
			return s.Groups.decodeFields(r)
		case "ch":
			if r.Nil() {
				s.Children = nil
				return true
			}
			if s.Children == nil {
				s.Children = &Children{}
			}
			return s.Children.decodeFields(r)
		case "st":
			return r.Str(&s.Status)
		case "jci":
			return r.Uint(&s.JobCreateIndex)
		}
		return r.Skip()
	})
}

// decodeFields reads counts by group name as DecodeMsgpack does.
func (gs *groupCounts) decodeFields(r *events.FieldReader) bool {
	n, ok := r.MapLen()
	if !ok {
		return false
	}
	if n < 0 {
		*gs = nil
		return true
	}
	out := make(groupCounts, 0, n)
	for range n {
		name, ok := r.Key()
		if !ok {
			return false
		}
		var c TaskGroupSummary
		if !r.Nil() && !c.decodeFields(r) {
			return false
		}
		out.set(name, c)
	}
	*gs = out
	return true
}

// decodeFields reads a group's counts (a map) into g.
func (g *TaskGroupSummary) decodeFields(r *events.FieldReader) bool {
	return r.Fields(func(key []byte) bool {
		switch string(key) {
		case "q":
			return r.Int(&g.Queued)
		case "c":
			return r.Int(&g.Complete)
		case "f":
			return r.Int(&g.Failed)
		case "r":
			return r.Int(&g.Running)
		case "s":
			return r.Int(&g.Starting)
		case "l":
			return r.Int(&g.Lost)
		case "u":
			return r.Int(&g.Unknown)
		}
		return r.Skip()
	})
}

// decodeFields reads children counts (a map) into c.
func (c *Children) decodeFields(r *events.FieldReader) bool {
	return r.Fields(func(key []byte) bool {
		switch string(key) {
		case "p":
			return r.Int64(&c.Pending)
		case "r":
			return r.Int64(&c.Running)
		case "d":
			return r.Int64(&c.Dead)
		}
		return r.Skip()
	})
}

// DecodeFields implements events.FieldDecoder: the head's fields of the
// job, the rest of the row skipped.
func (h *jobHead) DecodeFields(r *events.FieldReader) bool {
	return r.Fields(func(key []byte) bool {
		if string(key) != "job" {
			return r.Skip()
		}
		if r.Nil() {
			*h = jobHead{} // the job is all a head holds
			return true
		}
		j := &h.Job
		return r.Fields(func(key []byte) bool {
			switch string(key) {
			case "id":
				return r.Str(&j.ID)
			case "ns":
				return r.Str(&j.Namespace)
			case "pid":
				return r.Str(&j.ParentID)
			case "stop":
				return r.Bool(&j.Stop)
			case "disp":
				return r.Bool(&j.Dispatched)
			case "per":
				return r.Reflected(&j.Periodic)
			case "param":
				return r.Reflected(&j.ParameterizedJob)
			}
			return r.Skip()
		})
	})
}
