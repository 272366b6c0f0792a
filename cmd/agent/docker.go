package agent

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/client/driver/docker"
)

// DockerConfig is the client's docker driver settings: the agent file's
// plugin "docker" { config { … } } block, as Nomad's (docs/docker.md).
type DockerConfig struct {
	// Endpoint is the daemon's API, unix:///path or tcp://host:port;
	// default unix:///var/run/docker.sock.
	Endpoint string `json:"Endpoint"`
	// AllowPrivileged lets tasks run privileged containers.
	AllowPrivileged bool `json:"AllowPrivileged"`
	// VolumesEnabled lets tasks mount host paths outside their allocation.
	VolumesEnabled bool `json:"VolumesEnabled"`
	// KeepContainers keeps exited containers (gc { container = false }).
	KeepContainers bool `json:"KeepContainers"`
	// KeepImages turns image GC off (gc { image = false }); by default,
	// as Nomad's, the images of tasks are removed once unused for
	// ImageDelay.
	KeepImages bool `json:"KeepImages"`
	// ImageDelay is gc { image_delay }; default 3m.
	ImageDelay time.Duration `json:"ImageDelay"`
}

// newDockerDriver builds the docker driver the client offers; owner is
// the client's data directory, which labels its containers so that a
// client sweeps only its own.
func newDockerDriver(c DockerConfig, owner string, log *slog.Logger) (*docker.Driver, error) {
	if abs, err := filepath.Abs(owner); err == nil {
		owner = abs
	}
	return docker.New(docker.Config{Endpoint: c.Endpoint, AllowPrivileged: c.AllowPrivileged, Owner: owner,
		VolumesEnabled: c.VolumesEnabled, KeepContainers: c.KeepContainers, ImageGC: !c.KeepImages,
		ImageDelay: c.ImageDelay, Logger: log})
}
