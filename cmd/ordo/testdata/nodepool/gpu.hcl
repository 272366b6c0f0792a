node_pool "gpu" {
  description = "Machines with a GPU."

  meta {
    team = "ml"
  }
}
