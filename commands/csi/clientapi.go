package csi

import "github.com/ordoplane/ordo/events"

// The client's CSI API (client/csi serves it), which the servers call: the volume
// watcher to unpublish (node, controller), the volume create endpoint to
// create through a controller.
const (
	PathNodeDetach       = "/v1/client/csi/node/detach"
	PathControllerDetach = "/v1/client/csi/controller/detach"
	PathControllerCreate = "/v1/client/csi/controller/create"
	PathControllerDelete = "/v1/client/csi/controller/delete"
)

// VolumeRequest names one volume publication: the body of the detach
// calls. Modes are the claim's own (N22).
type VolumeRequest struct {
	PluginID string
	// Namespace and VolumeID are ordo's; ExternalID is the plugin's.
	Namespace      string
	VolumeID       string
	ExternalID     string
	AllocID        string
	AccessMode     string
	AttachmentMode string
	ReadOnly       bool
	// NodeID is the node plugin's id of the node the volume is published
	// to (controller calls).
	NodeID  string
	Secrets map[string]string
	Context map[string]string
}

// CreateRequest is the body of a controller create.
type CreateRequest struct {
	PluginID     string
	Name         string
	Capabilities []events.CSIVolumeCapability
	CapacityMin  int64
	CapacityMax  int64
	Parameters   map[string]string
	Secrets      map[string]string
	Topologies   *events.CSITopologyRequest
}

// CreateResponse is what a controller create answers.
type CreateResponse struct {
	ExternalID string
	Capacity   int64
	Context    map[string]string
	Topologies []events.CSITopology
}
