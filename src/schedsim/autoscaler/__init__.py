"""The Cluster Autoscaler: the binpacking estimator, scale-up, scale-down (drainability rules
and the removal simulation), node groups and their templates, expendable pods."""
