"""apps/v1 and batch/v1 workload controllers (and core/v1 ReplicationController): decoding
them and the pods they create."""
