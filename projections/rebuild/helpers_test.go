package rebuild_test

import (
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

var (
	upsert, deleteNS, register = pt.Upsert, pt.DeleteNS, pt.Register
	randomLogs, applyInBatches = pt.RandomLogs, pt.ApplyInBatches
	allProjs                   = all.Projections
	rebuildFrom                = pt.Rebuilt
)
