package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// pluginBlock is one of the agent file's plugin blocks, as Nomad's; ordo
// knows the docker driver's (docs/docker.md):
//
//	plugin "docker" {
//	  config {
//	    endpoint         = "unix:///var/run/docker.sock"
//	    allow_privileged = false
//	    volumes { enabled = false }   # host paths outside the allocation
//	    gc {
//	      image       = true          # remove the images of tasks once unused for image_delay
//	      image_delay = "3m"
//	      container   = true          # remove a task's container once it has exited
//	    }
//	  }
//	}
//
// Offering the driver is the client block's drivers list's job
// (drivers = ["exec", "docker"]).
type pluginBlock struct {
	Name   string             `hcl:"name,label"`
	Config *dockerPluginBlock `hcl:"config,block"`
}

// dockerPluginBlock is the docker plugin's config block.
type dockerPluginBlock struct {
	Endpoint        *string `hcl:"endpoint,optional"`
	AllowPrivileged *bool   `hcl:"allow_privileged,optional"`
	Volumes         *struct {
		Enabled *bool `hcl:"enabled,optional"`
	} `hcl:"volumes,block"`
	GC *struct {
		Image      *bool   `hcl:"image,optional"`
		ImageDelay *string `hcl:"image_delay,optional"`
		Container  *bool   `hcl:"container,optional"`
	} `hcl:"gc,block"`
}

// applyPlugins sets in c what the plugin blocks set; errors name the
// field and the file.
func applyPlugins(blocks []pluginBlock, c *agent.ClientConfig, path string) error {
	seen := map[string]bool{}
	for _, b := range blocks {
		if b.Name != "docker" {
			return fmt.Errorf("plugin %q in %s: unknown plugin (ordo configures \"docker\")", b.Name, path)
		}
		if seen[b.Name] {
			return fmt.Errorf("plugin %q in %s: set twice", b.Name, path)
		}
		seen[b.Name] = true
		p := b.Config
		if p == nil {
			continue
		}
		if p.Endpoint != nil {
			u, err := url.Parse(*p.Endpoint)
			if err != nil || (u.Scheme != "unix" || u.Path == "") && (u.Scheme != "tcp" || u.Host == "") {
				return fmt.Errorf("plugin \"docker\" config.endpoint in %s: %q is not unix:///path or tcp://host:port", path, *p.Endpoint)
			}
			c.Docker.Endpoint = *p.Endpoint
		}
		if p.AllowPrivileged != nil {
			c.Docker.AllowPrivileged = *p.AllowPrivileged
		}
		if p.Volumes != nil && p.Volumes.Enabled != nil {
			c.Docker.VolumesEnabled = *p.Volumes.Enabled
		}
		if g := p.GC; g != nil {
			if g.Container != nil {
				c.Docker.KeepContainers = !*g.Container
			}
			if g.Image != nil {
				c.Docker.KeepImages = !*g.Image
			}
			if g.ImageDelay != nil {
				d, err := time.ParseDuration(*g.ImageDelay)
				if err != nil || d <= 0 {
					return fmt.Errorf("plugin \"docker\" config.gc.image_delay in %s: %q is not a positive duration", path, *g.ImageDelay)
				}
				c.Docker.ImageDelay = d
			}
		}
	}
	return nil
}
