# An ordo server agent. Run with: ordo agent -config docs/examples/agent.hcl
# Flags given on the command line override these settings.
data_dir  = "/var/lib/ordo"
name      = "server-1"
http_addr = "127.0.0.1:4646"
raft_addr = "127.0.0.1:4647"
log_level = "info"

server {
  enabled          = true
  bootstrap_expect = 3
  join             = ["127.0.0.1:4656", "127.0.0.1:4666"]
  # The same on every server; make one with: head -c 32 /dev/urandom | base64
  # ($ORDO_CLUSTER_SECRET or -cluster-secret override it.)
  cluster_secret   = "change-me-to-a-random-secret"
}

# The HTTP API's timeouts and connections per address (docs/operations.md#http-limits).
limits {
  http_body_timeout         = "30s"
  http_max_conns_per_client = 100
}
