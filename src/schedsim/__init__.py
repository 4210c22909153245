"""schedsim: the Kubernetes scheduler framework over a Cluster-Autoscaler-style snapshot."""
