# A simulated cloud provider for the launcher (docs/launcher.md), booting
# instances in one second. Apply it with:
#
#   ordo provider apply docs/examples/providers/cheap-cloud.hcl
provider "cheap-cloud" {
  driver         = "sim"        # sim | static
  priority       = 50           # default 100; lower numbers are served first
  launch_retries = 3            # launches tried per instance before the request fails
  pool "main" {
    max_servers     = 10
    max_cores       = 64
    max_ram_mb      = 65536
    labels          = ["ubuntu-small"]
    node_attributes = { zone = "a" }
  }
  label "ubuntu-small" {
    instance_type = "small"
    min_ready     = 1
  }
  sim {
    instance_types = { small = { cores = 2, ram_mb = 4096 } }
    quota          = { instances = 20, cores = 40 }   # 0 or absent: unlimited
    boot_time      = "1s"
  }
}
