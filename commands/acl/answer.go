package acl

import (
	"github.com/ordoplane/ordo/commands"
	acls "github.com/ordoplane/ordo/projections/acl"
	"github.com/ordoplane/ordo/projections/fsm"
)

// Token and role writes are answered with the row their own entry wrote
// (commands.Answered), not one read again after a later write.
var (
	_ commands.Answered = (*UpsertToken)(nil)
	_ commands.Answered = Bootstrap{}
	_ commands.Answered = (*UpsertRole)(nil)
)

// AnswerRows implements commands.Answered: the token written.
func (u *UpsertToken) AnswerRows() []fsm.RowRef {
	return []fsm.RowRef{{Table: acls.TableTokens, Key: u.AccessorID}}
}

// AnswerRows implements commands.Answered: the management token written.
func (b Bootstrap) AnswerRows() []fsm.RowRef {
	return []fsm.RowRef{{Table: acls.TableTokens, Key: b.AccessorID}}
}

// AnswerRows implements commands.Answered: the role written, by the id
// decided (asked after Decide).
func (u *UpsertRole) AnswerRows() []fsm.RowRef {
	return []fsm.RowRef{{Table: acls.TableRoles, Key: u.Result()}}
}
