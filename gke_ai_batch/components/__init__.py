"""The Pulumi component resources: the cluster, node pools, JobSet and Kueue, queues, teams,
workloads, the fleet."""
