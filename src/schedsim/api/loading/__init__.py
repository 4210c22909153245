"""Reading manifests: text to documents, strict field decoding, the API server's defaults,
kube-scheduler-simulator exports."""
