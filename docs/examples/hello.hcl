# A service job whose task is a real process, run by the exec driver on
# the client of `ordo agent -dev`: it greets, then prints the date every
# five seconds.
#
#   ordo agent -dev                           # in one shell
#   ordo job run docs/examples/hello.hcl
#   ordo job status hello                     # the allocation's id
#   ordo alloc logs -f <alloc-id>             # hello from ordo, then the dates
#   ordo job stop hello                       # waits the shutdown delay, then SIGTERM
job "hello" {
  type        = "service"
  datacenters = ["dc1"]

  group "hello" {
    count = 1

    # Healthy once running for 2 s (the default is 10 s), so that the
    # deployment, and `ordo job run` following it, finish sooner.
    update {
      min_healthy_time = "2s"
    }

    task "hello" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello from ordo; while true; do date; sleep 5; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }

      shutdown_delay = "3s"
      kill_timeout   = "2s"
    }
  }
}
