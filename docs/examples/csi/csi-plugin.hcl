# A CSI plugin job: tools/csi-hostpath as a monolith (controller and node
# in one process) on every client. Build it where the clients can run it:
# `go build -o /usr/local/bin/csi-hostpath ./tools/csi-hostpath` (tasks get
# a default PATH, not the agent's).
job "csi-hostpath" {
  type = "system"

  group "plugin" {
    task "plugin" {
      driver = "exec"

      config {
        command = "/usr/local/bin/csi-hostpath"
        # The socket is $CSI_ENDPOINT, which the client sets (mount_dir
        # in the task directory); the node id defaults to the host name.
        args = ["-root", "/tmp/ordo-csi-hostpath"]
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
