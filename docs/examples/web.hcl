# A service job: three copies of a long sleep, run by the exec driver.
#
#   ordo job run docs/examples/web.hcl
job "web" {
  type        = "service"
  datacenters = ["dc1"]

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "5m"
    auto_revert      = true
  }

  group "web" {
    count = 3

    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    disconnect {
      lost_after = "1h"
      replace    = false
      reconcile  = "keep_original"
    }

    task "server" {
      driver = "exec"

      config {
        command = "/bin/sleep"
        args    = ["1000"]
      }

      env {
        GREETING = "hello"
      }

      resources {
        cpu    = 100
        memory = 64
      }

      shutdown_delay = "5s"
    }
  }
}
