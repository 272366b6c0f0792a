# A CSI plugin job: tools/csi-hostpath as a monolith (controller and node
# in one process) on every client. Build it with
# `go build -o bin/csi-hostpath ./tools/csi-hostpath` and put bin/ on PATH.
job "csi-hostpath" {
  type = "system"

  group "plugin" {
    task "plugin" {
      driver = "exec"

      config {
        command = "csi-hostpath"
        args    = ["-endpoint", "unix://${NOMAD_TASK_DIR}/csi/csi.sock", "-root", "/tmp/ordo-csi-hostpath", "-node-id", "${node.unique.id}"]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
