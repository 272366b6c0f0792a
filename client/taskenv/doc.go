// Package taskenv builds a task's runtime environment, Nomad's NOMAD_*
// variables, and interpolates ${...} in the strings of a job (driver
// config, env, args, meta, services, checks, templates) as Nomad does:
// ${NOMAD_*} and any other variable of the task's environment,
// ${env["NAME"]}, ${node.unique.id}, ${node.unique.name},
// ${node.datacenter}, ${node.region}, ${node.class}, ${node.pool},
// ${attr.<name>} and ${meta.<name>}. A variable it does not know is left
// as written, as Nomad leaves it.
package taskenv
