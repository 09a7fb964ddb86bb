"""The ACP executor's agents: one running agent per app, shared by its concurrent calls.

An app's agent is started on its first call, in the descriptor's folder, with the program its
`execution.start` names (found like every program: `programs.find_program`) and the minimal
environment plus the descriptor's `env`. It is started again when it has died, or when the
descriptor now says to start it differently; `stop_all` stops every agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio

from ..descriptor.model import AcpChannel
from ..errors import ServiceUnavailableError
from .base import Invocation
from .programs import child_environment, find_program, missing_program

if TYPE_CHECKING:  # the `acp` package takes half a second to import: only on first use
    from .acp_agent import AgentProcess, Launch

logger = logging.getLogger(__name__)

AgentKey = tuple[str, str]
"""An app's id and where its descriptor came from."""


class AgentPool:
    """`environ`: the gateway's environment (PATH, and the allow-listed variables agents get);
    `start_seconds`: spawn + `initialize`; `grace`: between SIGTERM and SIGKILL when one stops."""

    def __init__(self, environ: Mapping[str, str], *, start_seconds: float, grace: float) -> None:
        self._environ = environ
        self.start_seconds = start_seconds
        self.grace = grace
        self._agents: dict[AgentKey, AgentProcess] = {}
        self._locks: dict[AgentKey, anyio.Lock] = {}

    def missing(self, channel: AcpChannel) -> str | None:
        """Why the agent of `channel` cannot start here (its program is missing), or None."""
        return missing_program(channel.command, self._environ, channel.env.get("PATH") or None)

    def launch(self, invocation: Invocation, channel: AcpChannel) -> Launch:
        """How the agent of this call's app is started."""
        from .acp_agent import Launch  # noqa: PLC0415 (see TYPE_CHECKING above)

        base_dir = invocation.descriptor_dir
        program, looked = find_program(
            channel.command, self._environ, base_dir=base_dir, search_path=channel.env.get("PATH") or None
        )
        if program is None:
            raise ServiceUnavailableError(
                invocation.app.id,
                f"its ACP agent command {channel.command!r} was not found {looked}, or is not executable; "
                "install the agent or fix execution.start.command in the app's aai.json",
                command=channel.command,
            )
        env = child_environment(self._environ, channel.env)
        return Launch((program, *channel.args), base_dir, tuple(sorted(env.items())))

    async def agent(self, invocation: Invocation, channel: AcpChannel) -> AgentProcess:
        """The app's running agent, started (again) when there is none, it died, or its
        descriptor now says to start it differently."""
        from .acp_agent import AgentProcess  # noqa: PLC0415 (see TYPE_CHECKING above)

        key = _key(invocation)
        launch = self.launch(invocation, channel)
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            agent = self._agents.get(key)
            if agent is not None and agent.alive and agent.launch == launch:
                return agent
            if agent is not None:
                del self._agents[key]
                logger.info(
                    "%s: ACP agent pid %d %s; starting it again",
                    key[0],
                    agent.process.pid,
                    "has ended" if not agent.alive else "was replaced",
                )
                with anyio.CancelScope(shield=True):
                    await agent.stop(self.grace)
            agent = await AgentProcess.start(
                key[0], launch, start_seconds=self.start_seconds, grace=self.grace
            )
            self._agents[key] = agent
            return agent

    def running(self, invocation: Invocation) -> AgentProcess | None:
        """The app's agent if it is running; never starts one."""
        agent = self._agents.get(_key(invocation))
        return agent if agent is not None and agent.alive else None

    async def stop_all(self) -> None:
        agents, self._agents = list(self._agents.values()), {}
        with anyio.CancelScope(shield=True):
            for agent in agents:
                await agent.stop(self.grace)


def _key(invocation: Invocation) -> AgentKey:
    return invocation.app.id, invocation.app.source.location
