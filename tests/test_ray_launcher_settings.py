"""The `prism_ray` launcher's settings, without starting Ray (docs/cluster.md)."""

from __future__ import annotations

import pytest

from hydra_plugins.prism_launcher.prism_ray_launcher import LOCAL_OBJECT_STORE_BYTES, on_loopback, ray_init_arguments


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        (None, True),
        ("", True),
        ("127.0.0.1:6379", True),
        ("localhost:6379", True),
        ("ray://127.0.0.1:10001", True),
        ("[::1]:6379", True),
        ("10.0.0.5:6379", False),
        ("ray://head.cluster:10001", False),
        ("192.0.2.2:6379", False),
    ],
)
def test_only_a_local_instance_or_a_head_on_loopback_counts_as_loopback(address: str | None, loopback: bool) -> None:
    assert on_loopback(address) is loopback


def test_the_small_object_store_is_kept_only_for_a_local_instance() -> None:
    assert ray_init_arguments({"address": None, "num_cpus": 2}) == {
        "num_cpus": 2,
        "object_store_memory": LOCAL_OBJECT_STORE_BYTES,
    }
    assert ray_init_arguments({"address": "10.0.0.5:6379", "object_store_memory": None}) == {"address": "10.0.0.5:6379"}
