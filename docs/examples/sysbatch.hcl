# A parameterized sysbatch job: each dispatch runs once on every node, for
# example to clean a cache directory given in the dispatch meta.
#
#   ordo job dispatch -meta dir=/var/cache/app cleanup
job "cleanup" {
  type        = "sysbatch"
  datacenters = ["*"]

  parameterized {
    payload       = "forbidden"
    meta_required = ["dir"]
    meta_optional = ["dry_run"]
  }

  group "cleanup" {
    task "clean" {
      driver = "exec"

      config {
        command = "/bin/sh"
        # ${...} is interpolated by the client before the shell runs:
        # the dispatch's meta and the node's name.
        args    = ["-c", "echo cleaning ${NOMAD_META_dir} on ${node.unique.name}"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
