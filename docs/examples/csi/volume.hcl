# A CSI volume on the hostpath plugin: `ordo volume register` records a
# volume the plugin already has; `ordo volume create` asks the plugin's
# controller to make it.
id        = "db"
name      = "db"
type      = "csi"
plugin_id = "hostpath"

capacity_min = "10MiB"
capacity_max = "1GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

parameters {
  tier = "local"
}
