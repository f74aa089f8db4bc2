"""A cluster-wide limiter on Ray: one named, detached actor hands out leases per key.

The actor (``ragmeter-limits`` in the ``ragmeter`` namespace) is a semaphore for the whole
cluster, shared by every ragmeter process connected to it. Holders renew their leases; the
lease of a holder that died is reclaimed within ``lease_s`` seconds.

>>> RayLimiter("chat:http://127.0.0.1:9/v1|m", 0, lease_s=10.0).limit
1
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

from ragmeter.executors.ray_pool import import_ray

LIMITS_ACTOR = "ragmeter-limits"
NAMESPACE = "ragmeter"


class RayLimiter:
    """Leases from the named ``ragmeter-limits`` actor; picklable, so workers use it too.

    A held lease is renewed every ``lease_s / 3`` seconds; when its holder dies the renewals
    stop and the slot is free again within ``lease_s``.
    """

    def __init__(self, key: str, limit: int, *, lease_s: float) -> None:
        self.key = key
        self.limit = max(1, limit)
        self.lease_s = lease_s

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Block until the cluster has a free slot for :attr:`key`."""
        ray = import_ray()
        actor = limits_actor()
        lease = ray.get(actor.acquire.remote(self.key, self.limit, self.lease_s))
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(self.lease_s / 3):
                actor.renew.remote(self.key, lease, self.lease_s)

        threading.Thread(target=renew, name="ragmeter-lease", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            actor.release.remote(self.key, lease)

    @asynccontextmanager
    async def hold_async(self) -> AsyncIterator[None]:
        """:meth:`hold` for coroutines."""
        actor = limits_actor()
        lease = await actor.acquire.remote(self.key, self.limit, self.lease_s)

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.lease_s / 3)
                actor.renew.remote(self.key, lease, self.lease_s)

        renewing = asyncio.ensure_future(renew())
        try:
            yield
        finally:
            renewing.cancel()
            actor.release.remote(self.key, lease)


@functools.cache
def limits_actor() -> Any:
    """The cluster's limiter actor (made on first use; later processes find it by name)."""
    ray = import_ray()
    actor_class = ray.remote(Limits)
    return actor_class.options(
        name=LIMITS_ACTOR,
        namespace=NAMESPACE,
        lifetime="detached",
        get_if_exists=True,
        num_cpus=0,
        max_concurrency=10_000,
        max_restarts=-1,
    ).remote()


class Limits:
    """The limiter actor: per key, leases with an expiry; ``acquire`` waits for a free slot."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, float]] = {}
        self._peak: dict[str, int] = {}
        self._conditions: dict[str, asyncio.Condition] = {}

    def _condition(self, key: str) -> asyncio.Condition:
        if key not in self._conditions:
            self._conditions[key] = asyncio.Condition()
        return self._conditions[key]

    def _expire(self, key: str, now: float) -> dict[str, float]:
        held = self._held.setdefault(key, {})
        for lease, expiry in list(held.items()):
            if expiry <= now:
                del held[lease]
        return held

    async def acquire(self, key: str, limit: int, lease_s: float) -> str:
        """Wait until fewer than ``limit`` leases of ``key`` are out; return a new lease."""
        condition = self._condition(key)
        async with condition:
            while True:
                now = time.monotonic()
                held = self._expire(key, now)
                if len(held) < limit:
                    lease = uuid.uuid4().hex
                    held[lease] = now + lease_s
                    self._peak[key] = max(self._peak.get(key, 0), len(held))
                    return lease
                until_expiry = min(held.values()) - now
                with suppress(TimeoutError):
                    await asyncio.wait_for(condition.wait(), timeout=max(0.01, min(until_expiry, 5.0)))

    async def renew(self, key: str, lease: str, lease_s: float) -> bool:
        """Extend a lease still held; False when it had expired (its slot may be taken)."""
        held = self._held.get(key, {})
        if lease not in held:
            return False
        held[lease] = time.monotonic() + lease_s
        return True

    async def release(self, key: str, lease: str) -> None:
        """Give a lease back (unknown or expired leases are ignored)."""
        condition = self._condition(key)
        async with condition:
            self._held.get(key, {}).pop(lease, None)
            condition.notify_all()

    def stats(self, key: str) -> dict[str, int]:
        """``{"held": n, "peak": most ever held at once}`` for ``key``."""
        held = self._expire(key, time.monotonic())
        return {"held": len(held), "peak": self._peak.get(key, 0)}

    def reset(self, key: str) -> None:
        """Forget ``key``'s peak (tests)."""
        self._peak.pop(key, None)
