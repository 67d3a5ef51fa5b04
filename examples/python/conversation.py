"""Drive a durable-agent conversation from Python, with Temporal's Python SDK only.

Written from docs/protocol.md alone: the workflow type, the workflow id, the with-start policies, the JSON of every
message, the errors and the reopen recipe all come from there. Run it against a worker of durable-agent:

    pip install -r examples/python/requirements.txt
    python examples/python/conversation.py [conversation-id]

TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default "default") and DURABLE_AGENT_TASK_QUEUE
(default "durable-agent") say where. Each step prints one line of JSON.
"""

import asyncio
import gc
import json
import os
import sys
import uuid
from typing import Any, Awaitable, Callable, Optional

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError

WORKFLOW_TYPE = "conversationWorkflow"
BROKEN = {
    WorkflowExecutionStatus.FAILED,
    WorkflowExecutionStatus.TERMINATED,
    WorkflowExecutionStatus.TIMED_OUT,
    WorkflowExecutionStatus.CANCELED,
}


class ConversationEnded(Exception):
    """The conversation has ended (or its run broke): it takes no more messages."""


class Conversation:
    """One conversation, addressed by its workflow id (never a run id), so every call reaches its open run."""

    def __init__(self, client: Client, conversation_id: str, task_queue: str, settings: Optional[dict] = None):
        self.client = client
        self.conversation_id = conversation_id
        self.workflow_id = f"conversation-{conversation_id}"
        self.task_queue = task_queue
        self.settings = settings

    async def send(self, content: str, message_id: str) -> None:
        """Queue a message without waiting (signal-with-start `userMessage`)."""
        message = {"id": message_id, "content": content}

        async def signal_with_start(start_input: dict, reuse: WorkflowIDReusePolicy) -> None:
            await self.client.start_workflow(
                WORKFLOW_TYPE,
                start_input,
                id=self.workflow_id,
                task_queue=self.task_queue,
                id_reuse_policy=reuse,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                start_signal="userMessage",
                start_signal_args=[message],
            )

        await self._with_start(signal_with_start)

    async def ask(self, content: str, message_id: str) -> dict:
        """Queue a message and wait for its TurnResult (update-with-start `ask`, update id = message id)."""
        message = {"id": message_id, "content": content}

        async def update_with_start(start_input: dict, reuse: WorkflowIDReusePolicy) -> dict:
            start = WithStartWorkflowOperation(
                WORKFLOW_TYPE,
                start_input,
                id=self.workflow_id,
                task_queue=self.task_queue,
                id_reuse_policy=reuse,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            try:
                return await self.client.execute_update_with_start_workflow(
                    "ask", message, id=message_id, start_workflow_operation=start, result_type=dict
                )
            except WorkflowAlreadyStartedError:
                # The start operation holds the same error; take it, so asyncio does not report it as never retrieved.
                await asyncio.gather(start.workflow_handle(), return_exceptions=True)
                raise

        pause = 0.1
        while True:
            try:
                return await self._with_start(update_with_start)
            except WorkflowUpdateFailedError as error:
                failure = error.cause
                kind = failure.type if isinstance(failure, ApplicationError) else None
                if kind == "ConversationEnded":
                    raise ConversationEnded(str(failure)) from error
                if kind != "ConversationRollingOver":
                    raise
            # Handing over to the next run: ask again with the same id; the message was kept.
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 1.0)

    async def status(self) -> dict:
        return await self.client.get_workflow_handle(self.workflow_id).query("status", result_type=dict)

    async def held_call(self) -> dict:
        """The first decision the conversation waits for (`status` query, `pendingApprovals`), once there is one."""
        while True:
            pending = (await self.status()).get("pendingApprovals") or []
            if pending:
                return pending[0]
            await asyncio.sleep(0.1)

    async def approve(self, call_id: str, by: str, max_cost_usd: Optional[float] = None) -> dict:
        """Decide a held call (update `approve`); the update id makes a retry return the first decision."""
        request: dict = {"callId": call_id, "by": by}
        if max_cost_usd is not None:
            request["maxCostUsd"] = max_cost_usd
        handle = self.client.get_workflow_handle(self.workflow_id)
        return await handle.execute_update("approve", request, id=f"approve-{call_id}", result_type=dict)

    async def interrupt(self, reason: str) -> None:
        await self.client.get_workflow_handle(self.workflow_id).signal("interrupt", {"reason": reason})

    async def end(self, reason: str) -> None:
        await self.client.get_workflow_handle(self.workflow_id).signal("end", {"reason": reason})

    async def transcript(self) -> list:
        """The whole conversation, run by run back through `previousRunId` (docs/protocol.md, "Reading the whole transcript")."""
        messages: list = []
        run_id: Optional[str] = None
        stop: Optional[int] = None  # where the newer run's own messages begin
        while True:
            handle = self.client.get_workflow_handle(self.workflow_id, run_id=run_id)
            first = await handle.query("transcript", {"from": 0}, result_type=dict)
            offset, total = first["offset"], first["total"]
            start = offset
            if offset > 0:
                # The carried system messages come first, numbered from `offset`; this run's own messages follow.
                start += next((i for i, m in enumerate(first["messages"]) if m["role"] != "system"), len(first["messages"]))
            end = total if stop is None else stop
            own = []
            cursor = start
            while cursor < end:
                page = await handle.query("transcript", {"from": cursor, "limit": 200}, result_type=dict)
                if not page["messages"]:
                    break
                own.extend(page["messages"][: end - cursor])
                cursor += len(page["messages"])
            messages = own + messages
            if offset == 0 or not first.get("previousRunId"):
                return messages
            stop, run_id = start, first["previousRunId"]

    async def _with_start(self, call: Callable[[dict, WorkflowIDReusePolicy], Awaitable[Any]]) -> Any:
        """A with-start call as the protocol asks: REJECT_DUPLICATE for a new conversation, the reopen recipe else."""
        new = {"conversationId": self.conversation_id}
        if self.settings:
            new["settings"] = self.settings
        try:
            return await call(new, WorkflowIDReusePolicy.REJECT_DUPLICATE)
        except WorkflowAlreadyStartedError:
            pass  # only closed runs: it ended, or it closed idle and is reopened
        reopen = await self._reopen_input()
        if reopen is None:
            return await call(new, WorkflowIDReusePolicy.REJECT_DUPLICATE)
        return await call(reopen, WorkflowIDReusePolicy.ALLOW_DUPLICATE)

    async def _reopen_input(self) -> Optional[dict]:
        """The reopen recipe: the start argument that reopens the latest run, None if it is open, or ConversationEnded."""
        for _ in range(50):
            description = await self.client.get_workflow_handle(self.workflow_id).describe()
            if description.status == WorkflowExecutionStatus.RUNNING:
                return None
            if description.status == WorkflowExecutionStatus.CONTINUED_AS_NEW:
                await asyncio.sleep(0.1)
                continue
            if description.status in BROKEN:
                raise ConversationEnded(f"its latest run is {description.status.name}")
            latest = self.client.get_workflow_handle(self.workflow_id, run_id=description.run_id, result_type=dict)
            outcome = await latest.result(follow_runs=False)
            if outcome["closedBecause"] == "ended" or outcome["state"].get("ended"):
                raise ConversationEnded(f"{self.conversation_id} has ended")
            return {
                "conversationId": self.conversation_id,
                "settings": self.settings or outcome.get("settings") or {},
                "closeWhenIdle": bool(outcome.get("closeWhenIdle")),
                "state": outcome["state"],
                "previousRunId": description.run_id,
            }
        raise RuntimeError(f"{self.workflow_id} kept continuing as new")


def report(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


async def main() -> None:
    conversation_id = sys.argv[1] if len(sys.argv) > 1 else f"python-{uuid.uuid4()}"
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
    )
    try:
        await demo(client, conversation_id, os.environ.get("DURABLE_AGENT_TASK_QUEUE", "durable-agent"))
    finally:
        # Let go of the client while the event loop still runs: a short-lived process whose client is dropped during
        # interpreter shutdown can abort there (temporalio/sdk-python#300).
        del client
        gc.collect()


async def demo(client: Client, conversation_id: str, task_queue: str) -> None:
    conversation = Conversation(client, conversation_id, task_queue, settings={"systemPrompt": "Be brief."})

    # Start and send: the first signal-with-start creates the conversation. Sent twice, the message is queued once.
    await conversation.send("Hello!", message_id=f"{conversation_id}-1")
    await conversation.send("Hello!", message_id=f"{conversation_id}-1")
    report("sent", messageId=f"{conversation_id}-1")

    # Ask and wait: answered after the message before it, in order.
    result = await conversation.ask("Where is my order 981?", message_id=f"{conversation_id}-2")
    report("asked", turn=result["turn"], answer=result["answer"], stopReason=result["stopReason"])
    again = await conversation.ask("Where is my order 981?", message_id=f"{conversation_id}-2")
    report("asked again", sameResult=again == result)

    # Read the transcript.
    messages = await conversation.transcript()
    report("transcript", messages=[f"{m['role']}: {m['content']}" for m in messages])

    # Interrupt a turn that takes long: its ask completes as cancelled.
    slow = asyncio.create_task(conversation.ask("Compare every order I ever made.", message_id=f"{conversation_id}-3"))
    while (await conversation.status())["phase"] != "running":
        await asyncio.sleep(0.1)
    await conversation.interrupt("taking too long")
    cancelled = await slow
    report("interrupted", turn=cancelled["turn"], stopReason=cancelled["stopReason"], answer=cancelled["answer"])

    # End it: later messages are refused.
    await conversation.end("done")
    while (await client.get_workflow_handle(conversation.workflow_id).describe()).status == WorkflowExecutionStatus.RUNNING:
        await asyncio.sleep(0.1)
    try:
        await conversation.ask("Are you still there?", message_id=f"{conversation_id}-4")
        report("ended", refused=False)
    except ConversationEnded as error:
        report("ended", refused=True, reason=str(error))
    status = await conversation.status()
    report("status", phase=status["phase"], turns=status["turns"])

    # A conversation that closes when idle for a second, and reopens with its transcript on the next message.
    idle = Conversation(client, f"{conversation_id}-idle", task_queue, settings={"idleTimeoutMs": 1000})
    await idle.ask("Remember 42.", message_id=f"{conversation_id}-idle-1")
    while (await client.get_workflow_handle(idle.workflow_id).describe()).status == WorkflowExecutionStatus.RUNNING:
        await asyncio.sleep(0.2)
    reopened = await idle.ask("What number?", message_id=f"{conversation_id}-idle-2")
    report("reopened", turn=reopened["turn"], answer=reopened["answer"], transcript=len(await idle.transcript()))

    # A budget that stops and asks: the conversation's cost limit, set to "pause", holds the model call that would pass
    # it as a decision of kind "budget"; approving with maxCostUsd lets it go on and raises the limit. A millionth of a
    # dollar: the first call (made with nothing spent yet) passes it, whatever the model's price.
    limited = Conversation(
        client,
        f"{conversation_id}-budget",
        task_queue,
        settings={"conversationBudget": {"maxCostUsd": 0.000001, "onCostLimit": "pause"}},
    )
    first = await limited.ask("What did I order last?", message_id=f"{conversation_id}-budget-1")
    report("spent", priced=first["conversationCost"]["usd"] > 0)
    second = asyncio.create_task(limited.ask("And when did it ship?", message_id=f"{conversation_id}-budget-2"))
    held = await limited.held_call()
    report("held", kind=held["kind"], tool=held["tool"], turn=held["turn"], limitUsd=held["arguments"]["limitUsd"])
    decision = await limited.approve(held["callId"], by="python", max_cost_usd=0.01)
    again = await limited.approve(held["callId"], by="python", max_cost_usd=0.01)
    report("approved", decision=decision["decision"], maxCostUsd=decision["maxCostUsd"], sameDecision=again == decision)
    answered = await second
    report("answered", turn=answered["turn"], stopReason=answered["stopReason"], answer=answered["answer"])


if __name__ == "__main__":
    asyncio.run(main())
