# A job writing to the CSI volume "db": the client stages and publishes
# the volume before the task starts and mounts it at data/ in the task
# directory.
job "db" {
  type = "batch"

  group "db" {
    volume "data" {
      type            = "csi"
      source          = "db"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }

    task "write" {
      driver = "exec"

      config {
        command = "/bin/sh"
        # The volume is at the mount's destination in the task directory
        # (the task's working directory).
        args = ["-c", "date >> data/log && cat data/log"]
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }

      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
