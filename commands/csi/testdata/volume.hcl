id        = "db"
name      = "database"
type      = "csi"
plugin_id = "hostpath"

capacity_min = "1GiB"
capacity_max = "2GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

mount_options {
  fs_type     = "ext4"
  mount_flags = ["noatime"]
}

topology_request {
  required {
    topology { segments = { zone = "a" } }
  }
}

secrets {
  token = "s3cr3t"
}

parameters {
  tier = "fast"
}
