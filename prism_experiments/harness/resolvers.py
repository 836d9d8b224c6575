"""OmegaConf resolvers the experiment files may use; registered when the harness's Hydra glue is imported."""

from __future__ import annotations

from omegaconf import OmegaConf

ARM_RESOLVER = "prism.arm"


def arm_of_seed(seed: int, seeds_per_arm: int, *labels: str) -> str:
    """The label of the block of `seeds_per_arm` consecutive seeds that `seed` falls in: labels[seed // size].

    `${prism.arm:${seed},5,A,B}` with seeds 0-9 gives A for 0-4 and B for 5-9: a sweep over one
    seed range yields two arms on disjoint seeds (Hydra's basic sweeper only takes products).
    """
    seed, size = int(seed), int(seeds_per_arm)
    if size < 1 or not labels:
        raise ValueError(f"{ARM_RESOLVER}: need seeds_per_arm >= 1 and at least one label, got {size}, {labels}")
    block = seed // size
    if not 0 <= block < len(labels):
        raise ValueError(f"{ARM_RESOLVER}: seed {seed} is beyond {len(labels)} arm(s) of {size} seeds "
                         f"({', '.join(labels)}); sweep seeds 0-{len(labels) * size - 1}")  # fmt: skip
    return str(labels[block])


def register_resolvers() -> None:
    """Register the project's resolvers (idempotent)."""
    if not OmegaConf.has_resolver(ARM_RESOLVER):
        OmegaConf.register_new_resolver(ARM_RESOLVER, arm_of_seed)
