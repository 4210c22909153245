"""A small trace in the openb format (two T4 nodes of one GPU, two 600-milli pods in the
5-column format) and a profile with every Score plugin off: the experiment worked out by
hand in test_gpu_experiment.py, reused by the sweep's experiment test."""

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,1,T4\nn1,64000,262144,1,T4\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,4096,1,600\nb,1000,4096,1,600\n"
NO_SCORES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: '*'
"""
