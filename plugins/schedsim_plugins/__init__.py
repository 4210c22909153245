"""In-tree schedsim plugins mirroring kube-scheduler's default plugins."""
