package api

import "github.com/ordoplane/ordo/events"

// CSIVolumeListStub is a volume as GET /v1/volumes lists it (Nomad's
// api.CSIVolumeListStub).
type CSIVolumeListStub struct {
	ID                  string
	Namespace           string
	Name                string
	ExternalID          string
	Topologies          []events.CSITopology
	AccessMode          string
	AttachmentMode      string
	CurrentReaders      int
	CurrentWriters      int
	Schedulable         bool
	PluginID            string
	Provider            string
	ControllerRequired  bool
	ControllersHealthy  int
	ControllersExpected int
	NodesHealthy        int
	NodesExpected       int
	CreateIndex         uint64
	ModifyIndex         uint64
}

// CSIPluginListStub is a plugin as GET /v1/plugins lists it (Nomad's
// api.CSIPluginListStub).
type CSIPluginListStub struct {
	ID                  string
	Provider            string
	ControllerRequired  bool
	ControllersHealthy  int
	ControllersExpected int
	NodesHealthy        int
	NodesExpected       int
	CreateIndex         uint64
	ModifyIndex         uint64
}
