# An example job written by `ordo job init`. It runs as it is on the
# client of `ordo agent -dev`:
#
#   ordo job run example.nomad.hcl
#   ordo job status example
#   ordo alloc logs -f <alloc-id>
#   ordo job stop example
#
# The jobspec is Nomad's; docs/jobspec.md lists what ordo reads of it.
job "example" {
  type        = "service"
  datacenters = ["dc1"]

  group "web" {
    count = 1

    # `ordo job scale example 3` may change the count within these bounds.
    scaling {
      min = 1
      max = 3
    }

    update {
      max_parallel     = 1
      min_healthy_time = "2s"
      auto_revert      = true
    }

    task "clock" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo started; while true; do date; sleep 5; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }

      kill_timeout = "2s"
    }
  }
}
