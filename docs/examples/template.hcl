# A service whose task reads a variable through templates: the client
# renders them into the task directory before the task starts (the task
# waits while the variable does not exist), and restarts the task when
# the variable changes.
#
#   ordo var put nomad/jobs/greeter greeting=hello name=ordo
#   ordo job run docs/examples/template.hcl
#   ordo alloc logs <alloc-id>                # hello, ordo ... as ordo
#   ordo var put nomad/jobs/greeter greeting=hi name=ordo   # the task restarts
job "greeter" {
  type        = "service"
  datacenters = ["dc1"]

  group "greeter" {
    update {
      min_healthy_time = "1s"
    }

    task "greet" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/greeting.txt; echo \"as $GREETING_USER\"; exec sleep 3600"]
      }

      # A file in the task directory, from a variable and the task's
      # environment.
      template {
        data        = <<-EOT
          {{ with nomadVar "nomad/jobs/greeter" }}{{ .greeting }}, {{ .name }}{{ end }} from {{ env "NOMAD_TASK_NAME" }}
        EOT
        destination = "local/greeting.txt"
        change_mode = "restart"
      }

      # KEY=value lines added to the task's environment.
      template {
        data        = "GREETING_USER={{ with nomadVar \"nomad/jobs/greeter\" }}{{ .name }}{{ end }}\n"
        destination = "secrets/greeter.env"
        env         = true
      }

      resources {
        cpu    = 50
        memory = 32
      }

      kill_timeout = "2s"
    }
  }
}
