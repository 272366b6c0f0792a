# A node pool, as `ordo node pool apply docs/examples/nodepool.hcl` takes it.
# Nodes join it with the client block's node_pool = "gpu"; a job runs
# there with node_pool = "gpu".
node_pool "gpu" {
  description = "Machines with a GPU."

  meta {
    team = "ml"
  }
}
