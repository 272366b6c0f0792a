package services

import (
	"fmt"
	"strconv"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/taskenv"
	"github.com/ordoplane/ordo/events"
)

// Instance is one service instance of an allocation: its registration
// (checks pending) and its service block, interpolated with the
// environment of the task it belongs to.
type Instance struct {
	Reg events.ServiceRegistration
	// Service is the block with its strings interpolated.
	Service events.Service
	// Task is the task whose services it is; "" for a group service.
	Task string
	// CheckTask is the task a script check runs in: the service's task,
	// or for a group service its TaskName (else the first task).
	CheckTask string
	// Checks are the service's checks (interpolated) with the address and
	// port each one targets.
	Checks []Check
}

// Check is one check of an Instance.
type Check struct {
	events.ServiceCheck
	// Address and Port are where an http or tcp check connects.
	Address string
	Port    int
}

// ServiceID is the registration id of a service instance, Nomad's form:
// _nomad-task-<alloc>-<task or group-<group>>-<service>-<port label>.
func ServiceID(allocID, owner, service, portLabel string) string {
	return fmt.Sprintf("_nomad-task-%s-%s-%s-%s", allocID, owner, service, portLabel)
}

// Instances returns the service instances an allocation registers now:
// each running task's services, and the group's while any task runs and
// the allocation is not being stopped. Services of another provider are
// skipped; a service whose address cannot be resolved is reported in
// errs and skipped.
func Instances(v allocrunner.ServiceView, node *events.Node) (out []Instance, errs []error) {
	if v.Job == nil || v.Stopping {
		return nil, nil
	}
	tg := v.Job.Group(v.Alloc.TaskGroup)
	if tg == nil {
		return nil, nil
	}
	canary := v.Alloc.DeploymentStatus != nil && v.Alloc.DeploymentStatus.Canary
	var firstRunning string
	for i := range tg.Tasks {
		t := &tg.Tasks[i]
		st := v.Tasks[t.Name]
		if !st.Running {
			continue
		}
		if firstRunning == "" {
			firstRunning = t.Name
		}
		env := taskenv.New(st.Env, node)
		for _, s := range t.Services {
			inst, err := instance(v, node, s, env, t.Name, t.Name, canary)
			if err != nil {
				errs = append(errs, fmt.Errorf("task %q service %q: %w", t.Name, s.Name, err))
			} else if inst != nil {
				out = append(out, *inst)
			}
		}
	}
	if firstRunning == "" {
		return out, errs
	}
	env := taskenv.New(v.Tasks[firstRunning].Env, node)
	for _, s := range tg.Services {
		checkTask := s.TaskName
		if checkTask == "" {
			checkTask = firstRunning
		}
		inst, err := instance(v, node, s, env, "group-"+tg.Name, checkTask, canary)
		if err != nil {
			errs = append(errs, fmt.Errorf("group %q service %q: %w", tg.Name, s.Name, err))
		} else if inst != nil {
			inst.Task = ""
			out = append(out, *inst)
		}
	}
	return out, errs
}

// instance builds one service's instance; nil for another provider.
func instance(v allocrunner.ServiceView, node *events.Node, s events.Service, env *taskenv.Env,
	owner, checkTask string, canary bool) (*Instance, error) {
	if s.Provider != "" && s.Provider != events.ServiceProviderNomad {
		return nil, nil
	}
	s = interpolate(s, env)
	ports := v.Alloc.AllocatedResources.Ports()
	addr, port, err := resolve(s.Address, s.AddressMode, s.PortLabel, ports)
	if err != nil {
		return nil, err
	}
	tags := s.Tags
	if canary && len(s.CanaryTags) > 0 {
		tags = s.CanaryTags
	}
	reg := events.ServiceRegistration{
		ID: ServiceID(v.Alloc.ID, owner, s.Name, s.PortLabel), ServiceName: s.Name, Namespace: v.Alloc.Namespace,
		JobID: v.Alloc.JobID, AllocID: v.Alloc.ID, Tags: tags, Address: addr, Port: port,
	}
	if node != nil {
		reg.NodeID, reg.Datacenter = node.ID, node.Datacenter
	}
	inst := &Instance{Reg: reg, Service: s, Task: owner, CheckTask: checkTask}
	for i, c := range s.Checks {
		ck := Check{ServiceCheck: c, Address: addr, Port: port}
		if ck.Name == "" {
			ck.Name = fmt.Sprintf("service: %q check", s.Name)
			if i > 0 {
				ck.Name = fmt.Sprintf("service: %q check %d", s.Name, i)
			}
		}
		if ck.TaskName == "" {
			ck.TaskName = checkTask
		}
		if c.Type != events.CheckTypeScript && (c.PortLabel != "" || c.AddressMode != "") {
			label := c.PortLabel
			if label == "" {
				label = s.PortLabel
			}
			mode := c.AddressMode
			if mode == "" {
				mode = events.AddressModeHost
			}
			a, p, err := resolve(s.Address, mode, label, ports)
			if err != nil {
				return nil, fmt.Errorf("check %q: %w", ck.Name, err)
			}
			ck.Address, ck.Port = a, p
		}
		if ck.Address == "" {
			ck.Address = "127.0.0.1"
		}
		inst.Checks = append(inst.Checks, ck)
		inst.Reg.Checks = append(inst.Reg.Checks, events.CheckStatus{Name: ck.Name, Status: initialStatus(&c)})
	}
	return inst, nil
}

// resolve returns the address and port a service (or check) advertises:
// with address_mode auto or host the port label's host IP and host port;
// with alloc or driver (ordo runs tasks on the host's network) the host
// IP and the port inside the task (to), or a numeric label as written;
// an explicit address overrides the address, its port then being the
// label's host port or a number.
func resolve(address, mode, label string, ports []events.PortMapping) (string, int, error) {
	var mapping *events.PortMapping
	for i := range ports {
		if ports[i].Label == label {
			mapping = &ports[i]
			break
		}
	}
	num, numErr := strconv.Atoi(label)
	numeric := numErr == nil && num > 0
	if address != "" {
		switch {
		case label == "":
			return address, 0, nil
		case mapping != nil:
			return address, mapping.Value, nil
		case numeric:
			return address, num, nil
		}
		return "", 0, fmt.Errorf("invalid port %q: port label not found", label)
	}
	switch mode {
	case "", events.AddressModeAuto, events.AddressModeHost:
		if label == "" {
			return hostIP(ports), 0, nil
		}
		if mapping == nil {
			return "", 0, fmt.Errorf("invalid port %q: port label not found", label)
		}
		return mapping.HostIP, mapping.Value, nil
	case events.AddressModeAlloc, events.AddressModeDriver:
		switch {
		case label == "":
			return hostIP(ports), 0, nil
		case mapping != nil:
			p := mapping.To
			if p <= 0 {
				p = mapping.Value
			}
			return mapping.HostIP, p, nil
		case numeric:
			return hostIP(ports), num, nil
		}
		return "", 0, fmt.Errorf("invalid port %q: port label not found", label)
	}
	return "", 0, fmt.Errorf("invalid address_mode %q", mode)
}

// hostIP is the allocation's address when no port names one: its first
// port's host IP.
func hostIP(ports []events.PortMapping) string {
	for _, p := range ports {
		if p.HostIP != "" {
			return p.HostIP
		}
	}
	return ""
}

// interpolate replaces ${...} in a service's strings and its checks'.
func interpolate(s events.Service, env *taskenv.Env) events.Service {
	s.Name = env.Replace(s.Name)
	s.Tags = env.ReplaceAll(s.Tags)
	s.CanaryTags = env.ReplaceAll(s.CanaryTags)
	s.PortLabel = env.Replace(s.PortLabel)
	s.Address = env.Replace(s.Address)
	s.Meta = env.ReplaceMap(s.Meta)
	s.CanaryMeta = env.ReplaceMap(s.CanaryMeta)
	checks := make([]events.ServiceCheck, len(s.Checks))
	for i, c := range s.Checks {
		c.Name = env.Replace(c.Name)
		c.Command = env.Replace(c.Command)
		c.Args = env.ReplaceAll(c.Args)
		c.Path = env.Replace(c.Path)
		c.Protocol = env.Replace(c.Protocol)
		c.PortLabel = env.Replace(c.PortLabel)
		c.Method = env.Replace(c.Method)
		c.Body = env.Replace(c.Body)
		if c.Header != nil {
			h := make(map[string][]string, len(c.Header))
			for k, vs := range c.Header {
				h[k] = env.ReplaceAll(vs)
			}
			c.Header = h
		}
		checks[i] = c
	}
	if s.Checks == nil {
		checks = nil
	}
	s.Checks = checks
	return s
}
