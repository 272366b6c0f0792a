package docker

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/client/driver"
)

// blocks reads the repeated block key: a list of maps (how jobspecs give
// blocks and lists of objects) or one map.
func (p *parser) blocks(key string) []*parser {
	var ms []map[string]any
	switch v := p.cfg[key].(type) {
	case nil:
		return nil
	case map[string]any:
		ms = append(ms, v)
	case []map[string]any:
		ms = v
	case []any:
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				p.fail(fmt.Sprintf("%s.%d", key, i), "is a %T, want a block", e)
				return nil
			}
			ms = append(ms, m)
		}
	default:
		p.fail(key, "is a %T, want a block", v)
		return nil
	}
	out := make([]*parser, len(ms))
	for i, m := range ms {
		out[i] = &parser{cfg: m, prefix: fmt.Sprintf("%s%s.%d.", p.prefix, key, i)}
	}
	return out
}

// only fails on a key of the block outside keys.
func (p *parser) only(keys ...string) {
	for k := range p.cfg {
		if !slices.Contains(keys, k) {
			p.fail(k, "unknown key (want %s)", strings.Join(keys, ", "))
		}
	}
}

// join keeps the first error of a nested block's parser.
func (p *parser) join(c *parser) {
	if p.err == nil {
		p.err = c.err
	}
}

// mounts reads the mount blocks: type "bind" (source as volumes take it),
// "tmpfs" (tmpfs_options size in bytes and mode) or "volume" (a named
// volume of the daemon, needing volumes enabled).
func (d *Driver) mounts(p *parser, cfg driver.TaskConfig) []mount {
	var out []mount
	for _, b := range p.blocks("mount") {
		b.only("type", "target", "source", "readonly", "bind_options", "tmpfs_options", "volume_options")
		m := mount{Type: b.str("type"), Target: b.str("target"), ReadOnly: b.boolean("readonly")}
		if m.Type == "" {
			m.Type = "volume" // Nomad's default
		}
		if !filepath.IsAbs(m.Target) {
			b.fail("target", "%q is not an absolute path in the container", m.Target)
		}
		switch m.Type {
		case "bind":
			src := b.str("source")
			host, err := d.hostPath(cfg, src)
			if src == "" {
				b.fail("source", "required for a bind mount")
			} else if err != nil {
				b.fail("source", "%v", err)
			}
			m.Source = host
			for _, o := range b.blocks("bind_options") {
				o.only("propagation")
				m.BindOptions = &bindOptions{Propagation: o.str("propagation")}
				b.join(o)
			}
		case "tmpfs":
			for _, o := range b.blocks("tmpfs_options") {
				o.only("size", "mode")
				m.TmpfsOptions = &tmpfsOptions{}
				m.TmpfsOptions.SizeBytes, _ = o.integer("size")
				m.TmpfsOptions.Mode, _ = o.integer("mode")
				b.join(o)
			}
		case "volume":
			if !d.cfg.VolumesEnabled {
				b.fail("type", "volume mounts need volumes enabled in the client's plugin \"docker\" config")
			}
			m.Source = b.str("source")
			if len(b.blocks("volume_options")) > 0 {
				b.fail("volume_options", "not supported")
			}
		default:
			b.fail("type", "%q: want bind, tmpfs or volume", m.Type)
		}
		p.join(b)
		out = append(out, m)
	}
	return out
}

// ulimits reads the ulimit block: name = "soft" or "soft:hard".
func ulimits(p *parser) []ulimit {
	var out []ulimit
	m := p.stringMap("ulimit")
	for _, name := range sortedKeys(m) {
		v := m[name]
		soft, hard, two := strings.Cut(v, ":")
		s, err1 := strconv.ParseInt(soft, 10, 64)
		h, err2 := s, error(nil)
		if two {
			h, err2 = strconv.ParseInt(hard, 10, 64)
		}
		if err1 != nil || err2 != nil || s < 0 || h < s {
			p.fail("ulimit."+name, "%q: want \"soft\" or \"soft:hard\", whole numbers, hard not below soft", v)
			return nil
		}
		out = append(out, ulimit{Name: name, Soft: s, Hard: h})
	}
	return out
}

// devices reads the devices list: host_path, container_path (default the
// host path) and cgroup_permissions (default "rwm").
func devices(p *parser) []device {
	var out []device
	for _, b := range p.blocks("devices") {
		b.only("host_path", "container_path", "cgroup_permissions")
		dv := device{PathOnHost: b.str("host_path"), PathInContainer: b.str("container_path"), CgroupPermissions: b.str("cgroup_permissions")}
		if !filepath.IsAbs(dv.PathOnHost) {
			b.fail("host_path", "%q is not an absolute path", dv.PathOnHost)
		}
		if dv.PathInContainer == "" {
			dv.PathInContainer = dv.PathOnHost
		}
		if dv.CgroupPermissions == "" {
			dv.CgroupPermissions = "rwm"
		}
		if strings.Trim(dv.CgroupPermissions, "rwm") != "" {
			b.fail("cgroup_permissions", "%q: want letters of rwm", dv.CgroupPermissions)
		}
		p.join(b)
		out = append(out, dv)
	}
	return out
}

// logConfig reads the logging block. The driver follows a container's
// output through the daemon's log API into the task's log files, so the
// daemon must keep it readable: json-file (the default, capped at 2 files
// of 2 MB unless its config says otherwise) or local.
func logConfig(p *parser) map[string]any {
	typ, conf := "json-file", map[string]string{"max-size": "2m", "max-file": "2"}
	for _, b := range p.blocks("logging") {
		b.only("type", "config")
		if t := b.str("type"); t != "" {
			typ = t
		}
		if c := b.stringMap("config"); c != nil {
			conf = c
		}
		p.join(b)
	}
	if typ != "json-file" && typ != "local" {
		p.fail("logging.type", "%q: the driver reads the container's logs back, so want json-file or local", typ)
	}
	return map[string]any{"Type": typ, "Config": conf}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
