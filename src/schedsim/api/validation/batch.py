"""batch/v1 validation that is not a Job's decoding: a CronJob's jobTemplate.

schedsim does not run CronJobs (the loader sets them aside with a warning), but what the API
server would refuse in one is still an error: ``ValidateCronJobSpec`` ->
``ValidateJobTemplateSpec`` (``pkg/apis/batch/validation``, release-1.34). The Jobs a
CronJob makes always get a generated selector, so ``jobTemplate.spec.selector`` is refused
with "`selector` will be auto-generated" and ``jobTemplate.spec.manualSelector: true`` is
not supported. A Job's own selector rules are in `schedsim.api.apps.workloads`
(``validateGeneratedSelector``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedsim.api.validation.common import Problems

__all__ = ["validate_cron_job"]


def validate_cron_job(obj: Mapping[str, Any], out: Problems) -> None:
    """Record ``ValidateJobTemplateSpec``'s selector rules for a CronJob in ``out``.

    Args:
        obj: the CronJob as read.
        out: receives ``spec.jobTemplate.spec.selector`` / ``...manualSelector`` errors.
    """
    spec = obj.get("spec")
    job_template = spec.get("jobTemplate") if isinstance(spec, Mapping) else None
    job_spec = job_template.get("spec") if isinstance(job_template, Mapping) else None
    if not isinstance(job_spec, Mapping):
        return
    path = "spec.jobTemplate.spec"
    if job_spec.get("selector") is not None:
        out.error(f"{path}.selector", "`selector` will be auto-generated")
    if job_spec.get("manualSelector") is True:
        out.error(
            f"{path}.manualSelector", 'unsupported value true: supported values: "nil", "false"'
        )
