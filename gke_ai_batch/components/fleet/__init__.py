"""A MultiKueue fleet: one manager cluster that queues the jobs and 1 to 20 worker clusters, in
several regions, that run them wherever GKE has accelerators. Kueue v0.19.2, JobSet v0.12.0.

The fleet's pieces live in their layers; this package deploys them (deploy.py):

* gke_ai_batch/plan/multikueue.py, the manager: the Configuration's `multiKueue` block, every
  field written out; the AdmissionCheck -> MultiKueueConfig -> MultiKueueCluster -> Secret
  chain with the names agreeing; `managed_by_problem`, the Kubernetes floor for Job
  spec.managedBy. MultiKueue itself needs no feature gate: beta and on since Kueue 0.9
  (pkg/features/kube_features.go:679-682).
* gke_ai_batch/model/multikueue.py: `cluster_queue_problems`, why Kueue would keep a manager
  ClusterQueue inactive (standard library only: the policy pack runs it too).
* gke_ai_batch/domain/multikueue_worker.py, each worker: ServiceAccount multikueue-sa in
  kueue-system, a read-only ClusterRole bound cluster-wide, a ClusterRole of writes bound in
  each team namespace the worker mirrors (both narrowed to what Kueue's remote client calls for
  the job kinds the stack runs), and a long-lived token Secret.
* gke_ai_batch/plan/kubeconfig.py: the manager's kubeconfig for a worker, and
  `kubeconfig_problems`, Kueue's kubeconfig checks mirrored (no exec plugin, token file, CA file
  or insecure TLS).

Ordering, through the public components (gke_ai_batch/components/multikueue.py). On a worker:
its Kueue and JobSet installs (and their webhook probe) come first, then its MultiKueueWorker:
the ServiceAccount, the ClusterRoles and binding, then the token Secret (the token controller
fills a token only for an existing ServiceAccount); the write RoleBindings wait for their team
namespaces, with each Team. On the manager, its MultiKueueManager: the kubeconfig Secret of a
worker waits for that worker's MultiKueueWorker (its token Secret's `data.token` and
`data["ca.crt"]` are read back, as Pulumi secrets) and for the worker's Kueue; the
MultiKueueClusters wait for the Secrets, the MultiKueueConfigs for the clusters, the
AdmissionChecks for the MultiKueueConfigs, the ClusterQueues for the AdmissionChecks. A
MultiKueueCluster created before its Secret is not fatal (Kueue reconciles again when the
Secret appears, multikueuecluster.go:903-906) but it shows as inactive meanwhile."""
