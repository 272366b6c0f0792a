// Package all lists every projection a server maintains, in apply order, so
// the FSM, rebuild tools and tests use the same set.
package all

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/acl"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/deployments"
	_ "github.com/ordoplane/ordo/projections/evaldelete" // eval delete safety (N6) and pages by filter (N4), at apply
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/history"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nodepools"
	"github.com/ordoplane/ordo/projections/nodes"
	_ "github.com/ordoplane/ordo/projections/nsguard" // the namespace delete guard's check (N9)
	"github.com/ordoplane/ordo/projections/scaling"
	"github.com/ordoplane/ordo/projections/schedconfig"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/projections/services"
	"github.com/ordoplane/ordo/projections/variables"
)

// Projections returns the projections in apply order.
func Projections() []projections.Projection {
	return []projections.Projection{namespaces.Projection{}, servers.Projection{},
		nodes.Projection{},
		jobs.Projection{},
		evals.Projection{}, allocs.Projection{}, deployments.Projection{},
		history.Projection{},
		keyring.Projection{},
		acl.Projection{},
		variables.Projection{},
		launcher.Projection{},
		csi.Projection{},
		scaling.Projection{},
		nodepools.Projection{}, schedconfig.Projection{},
		services.Projection{},
	}
}
