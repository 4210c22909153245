"""Example manifests shipped with schedsim (the CLI runs demo-cluster.yaml by default)."""
