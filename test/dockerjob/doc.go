// Package dockerjob runs docker jobs end to end: a dev agent whose client
// offers the docker driver, pointed at a dockerd the tests start for
// themselves (client/driver/docker/dockertest), places a job, runs its
// container with the job's ports, serves on loopback, writes its logs
// where `ordo alloc logs` reads them, restarts a container killed behind
// the client's back, and removes containers when the job stops. A
// variable's value a template renders into secrets/ stays out of the
// container's labels, the log and the Kafka mirror (kfake).
package dockerjob
