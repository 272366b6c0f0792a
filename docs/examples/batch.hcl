# A periodic batch job: every night at 02:00 UTC, run a report once.
job "report" {
  type        = "batch"
  datacenters = ["dc1"]
  priority    = 40

  periodic {
    crons            = ["0 2 * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  meta {
    owner = "analytics"
  }

  group "report" {
    reschedule {
      attempts       = 3
      interval       = "6h"
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "10m"
      unlimited      = false
    }

    task "report" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo report for ${NOMAD_JOB_NAME} && sleep 5"]
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
