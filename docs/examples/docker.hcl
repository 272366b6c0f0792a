# A web server in a container: busybox httpd serves the task's local/
# directory on the group's dynamic port "http", in the host's network
# namespace (docs/docker.md). Needs a client offering the docker driver
# and an image with busybox (here busybox:1.36, pulled if missing).
job "docker-web" {
  datacenters = ["dc1"]

  group "web" {
    network {
      port "http" {}
    }

    task "httpd" {
      driver       = "docker"
      kill_timeout = "5s"

      config {
        image        = "busybox:1.36"
        command      = "/bin/sh"
        args         = ["-c", "echo hello from $NOMAD_ALLOC_ID > $NOMAD_TASK_DIR/index.html; exec httpd -f -v -p $NOMAD_PORT_http -h /local"]
        network_mode = "host"
        ports        = ["http"]
        init         = true
        labels {
          team = "web"
        }
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
