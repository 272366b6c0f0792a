package launcher

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// TenantFitsOp is the precondition operation TenantFits carries.
const TenantFitsOp events.PreconditionOp = "launcher-tenant-fits"

// TenantFits returns the precondition that tenant's instances plus add
// stay within its limits at apply (P13): launches for one tenant on two
// providers at once cannot both pass it.
func TenantFits(tenant string, add Usage) events.Precondition {
	return events.Precondition{Table: TenantsTable, Op: TenantFitsOp,
		Key: fmt.Sprintf("%s\x00%d\x00%d\x00%d", tenant, add.Servers, add.Cores, add.RAMMB)}
}

func init() {
	projections.RegisterCheck(TenantFitsOp, func(v projections.View, p events.Precondition) string {
		parts := strings.Split(p.Key, "\x00")
		if len(parts) != 4 {
			return "malformed tenant precondition"
		}
		var n [3]int
		for i := range n {
			x, err := strconv.Atoi(parts[i+1])
			if err != nil {
				return "malformed tenant precondition"
			}
			n[i] = x
		}
		reason, err := TenantExceeds(v, parts[0], Usage{Servers: n[0], Cores: n[1], RAMMB: n[2]})
		if err != nil {
			return "tenant check: " + err.Error()
		}
		return reason
	})
}

// TenantExceeds says which limit of tenant its instances plus add would
// pass, or "" when they fit (or the tenant has no limits).
func TenantExceeds(v projections.View, tenant string, add Usage) (string, error) {
	if tenant == "" {
		return "", nil
	}
	t, err := GetTenant(v, tenant)
	if errors.Is(err, projections.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	insts, err := TenantInstances(v, tenant)
	if err != nil {
		return "", err
	}
	return t.Exceeds(UsageOf(insts).Add(add)), nil
}

// Exceeds names the first limit u passes, or "".
func (t *Tenant) Exceeds(u Usage) string {
	for _, c := range []struct {
		name       string
		limit, use int
	}{{"max-servers", t.MaxServers, u.Servers}, {"max-cores", t.MaxCores, u.Cores}, {"max-ram", t.MaxRAMMB, u.RAMMB}} {
		if c.limit > 0 && c.use > c.limit {
			return fmt.Sprintf("tenant %s over %s: %d of %d", t.Name, c.name, c.use, c.limit)
		}
	}
	return ""
}
