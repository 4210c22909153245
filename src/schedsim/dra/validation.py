"""CEL selectors checked when the manifests are read, as the API server checks them.

The API server compiles every CEL selector of a DeviceClass, a ResourceClaim and a
ResourceClaimTemplate when the object is created (pkg/apis/resource/validation,
``validateSelector`` -> ``cel.GetCompiler().CompileCELExpression``) and rejects the object
when the expression does not compile or does not evaluate to bool. schedsim does the same at
load time, so such input is bad input (``FILE: KIND NS/NAME: FIELD: problem``, exit status
2) instead of a plugin error in the middle of a run.
"""

from __future__ import annotations

from collections.abc import Iterator

from schedsim.api.errors import ManifestError
from schedsim.api.loading.loader import Manifests
from schedsim.api.resource import (
    DeviceClass,
    DeviceSelector,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from schedsim.dra.cel import CelCache

__all__ = ["check_cel_selectors"]


def _spec_selectors(
    spec: ResourceClaimSpec, prefix: str
) -> Iterator[tuple[str, tuple[DeviceSelector, ...]]]:
    for i, request in enumerate(spec.requests):
        if request.exactly is not None:
            yield f"{prefix}.requests[{i}].exactly", request.exactly.selectors
        for j, sub in enumerate(request.first_available):
            yield f"{prefix}.requests[{i}].firstAvailable[{j}]", sub.selectors


def check_cel_selectors(
    manifests: Manifests, cache: CelCache | None = None, *, consumable_capacity: bool = False
) -> None:
    """Compile every CEL selector of the manifests' DeviceClasses, ResourceClaims and
    ResourceClaimTemplates.

    Args:
        manifests: what was read.
        cache: where the compiled expressions go (a DynamicResources plugin's cache can then
            reuse them); a new one by default.
        consumable_capacity: the DRAConsumableCapacity gate (declares
            ``device.allowMultipleAllocations``).

    Raises:
        ManifestError: ``FILE: KIND NS/NAME: ...selectors[k].cel.expression: <compile
            error>`` for the first selector that does not compile or is not boolean.
    """
    cel = cache if cache is not None else CelCache()
    Owner = DeviceClass | ResourceClaim | ResourceClaimTemplate
    groups: list[tuple[Owner, str, Iterator[tuple[str, tuple[DeviceSelector, ...]]]]] = []
    for dc in manifests.device_classes:
        groups.append((dc, f"DeviceClass {dc.name}", iter([("spec", dc.selectors)])))
    for claim in manifests.resource_claims:
        groups.append(
            (
                claim,
                f"ResourceClaim {claim.namespace}/{claim.name}",
                _spec_selectors(claim.spec, "spec.devices"),
            )
        )
    for t in manifests.resource_claim_templates:
        groups.append(
            (
                t,
                f"ResourceClaimTemplate {t.namespace}/{t.name}",
                _spec_selectors(t.spec, "spec.spec.devices"),
            )
        )
    for obj, label, selectors in groups:
        for path, sels in selectors:
            for k, sel in enumerate(sels):
                error = cel.compile(sel.expression, consumable_capacity).error
                if error is not None:
                    first = error.splitlines()[0]
                    raise ManifestError(
                        f"{manifests.source_of(obj)}: {label}: "
                        f"{path}.selectors[{k}].cel.expression: {first}"
                    )
