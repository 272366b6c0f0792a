package evalfeed

import "github.com/ordoplane/ordo/events"

// claimFreedClass is the class a freed CSI claim changes when its node is
// gone: blocked evals of groups with CSI volumes escape computed classes,
// so any class unblocks them.
const claimFreedClass = "csi-claim-freed"

// freedClaims returns the classes whose capacity a release of CSI claims
// changes: a freed claim may let a blocked eval waiting for the volume
// place (N22: the claim cleared by itself).
func freedClaims(p *events.CSIVolumeClaimsUpdated, cl *classes) ([]string, error) {
	var out []string
	for _, c := range p.Claims {
		if c.State != events.CSIClaimFreed {
			continue
		}
		cc, err := cl.ofNode(c.NodeID)
		if err != nil {
			return nil, err
		}
		if len(cc) == 0 {
			cc = []string{claimFreedClass}
		}
		out = append(out, cc...)
	}
	return out, nil
}
