package projections_test

import (
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

var (
	upsert   = pt.Upsert
	closed   = pt.Closed
	register = pt.Register
	allProjs = all.Projections
)
