"""A MultiKueue fleet: one manager cluster that queues the jobs and 1 to 20 worker clusters, in
several regions, that run them wherever GKE has accelerators (DWS queued provisioning or
flex-start on the workers' own queues). Kueue v0.19.2, JobSet v0.12.0.

What exists (pure functions; no config model, no Pulumi yet):

* multikueue.py, the manager: `MultiKueueSettings` and `multikueue_configuration` (the
  Configuration's `multiKueue` block, every field written out); `multikueue_manifests`, the
  AdmissionCheck -> MultiKueueConfig -> MultiKueueCluster -> Secret chain with the names
  agreeing; `cluster_queue_problems` (queues.py, standard library only for the policy pack), why
  Kueue would keep a manager ClusterQueue inactive (notably a MultiKueue check next to a
  ProvisioningRequest check); `managed_by_problem`, the
  Kubernetes floor for Job spec.managedBy. MultiKueue itself needs no feature gate: beta and on
  since Kueue 0.9 (pkg/features/kube_features.go:679-682).
* worker.py, each worker: ServiceAccount multikueue-sa in kueue-system, a read-only ClusterRole
  bound cluster-wide, a ClusterRole of writes bound in each team namespace the worker mirrors
  (both narrowed to what Kueue's remote client calls for the job kinds the stack runs), and a
  long-lived token Secret.
* kubeconfig.py: the manager's kubeconfig for a worker, and `kubeconfig_problems`, Kueue's
  kubeconfig checks mirrored (no exec plugin, token file, CA file or insecure TLS).

What the next step wires:

* A `FleetConfig` model in gke_ai_batch/config (manager cluster, workers with their regions and
  pools, MultiKueueSettings, the job kinds), refusing at synth time what these functions
  refuse: worker names and count, the step size, managed_by_problem for the manager's
  minMasterVersion, cluster_queue_problems for the manager's queues.
* One pulumi-kubernetes Provider per cluster, built from the GKE cluster's endpoint and CA; the
  manager's provider creates the MultiKueue objects, each worker's provider its RBAC, queues
  and namespaces (MultiKueue dispatches into the same namespace and LocalQueue name on the
  worker, so the worker mirrors them).
* Ordering. On a worker: its Kueue and JobSet installs (and their webhook probe) come first,
  then its queues, then the ServiceAccount, the ClusterRole and binding, then the token Secret
  (the token controller fills a token only for an existing ServiceAccount). On the manager: the
  kubeconfig Secret of a worker waits for that worker's token Secret (its `data.token` and
  `data["ca.crt"]` are read back, as Pulumi secrets) and for the worker's Kueue; its
  MultiKueueCluster waits for the Secret, the MultiKueueConfig for the clusters, the
  AdmissionCheck for the MultiKueueConfig, the ClusterQueues for the AdmissionCheck. A
  MultiKueueCluster created before its Secret is not fatal (Kueue reconciles again when the
  Secret appears, multikueuecluster.go:903-906) but it shows as inactive meanwhile.
* `worker_kubeconfig` runs inside an Output.apply over the endpoint, CA and token, then
  `encode_kubeconfig` for the Secret's data; the result stays a Pulumi secret.
* Token rotation: replacing the worker's token Secret mints a new token; the manager's Secret is
  rewritten with it, and Kueue reconnects without a restart: its MultiKueueCluster controller
  watches Secrets and requeues every cluster whose kubeconfig lives in the changed Secret
  (Watches(&corev1.Secret{}, &secretHandler{...}), secretHandler.queue,
  pkg/controller/admissionchecks/multikueue/multikueuecluster.go:1261 and 1344-1410), and a
  changed config restarts the remote client (updateConfigAndRefreshWatchers, :301-313). A
  worker out of reach meanwhile keeps its admitted workloads for workerLostTimeout.
"""
