"""scheduling.k8s.io: PriorityClasses and the Priority admission plugin."""
