import type { ToolDefinition } from '../shared/types.js';
import type { InputRequests } from './input-requests.js';
import type { EventLog } from './stream-events.js';
import type { TurnObserver, TurnProgress } from './turn.js';

/** The conversation's running turn, as the conversation keeps it. */
export interface RunningTurn {
  turn: number;
  messageId: string;
  /** Cancels the turn's scope. */
  cancel: () => void;
  interrupted: boolean;
  reason?: string;
  progress?: TurnProgress;
}

/** Where a running turn's reports go in its conversation. */
export interface TurnReports {
  events: EventLog;
  inputs: InputRequests;
  /** The turn's spend or activity changed: the status and the Web UI's details may change. */
  changed(): void;
  /** The turn listed its tools (the `modelContext` query hands them to the model activity). */
  toolsListed(tools: ToolDefinition[], digest: string | undefined): void;
  /** The conversation was ended: what the turn still waits for that nobody will need is given up (./tool-tasks.ts). */
  ending?(): boolean;
}

/** What the running turn reports: its stream events, its progress and its tools. */
export function observeTurn(running: RunningTurn, reports: TurnReports): TurnObserver {
  const { events, inputs } = reports;
  const { turn } = running;
  return {
    progress: (progress) => {
      running.progress = progress;
      reports.changed();
    },
    modelCallStarted: (round) => events.startModelCall(turn, round),
    modelCallFinished: (streamedText) => events.finishModelCall(streamedText),
    toolsListed: (tools, digest) => reports.toolsListed(tools, digest),
    serversUnavailable: (servers) => events.append({ type: 'servers_unavailable', turn, servers }),
    toolStarted: (call) => events.startToolCall(turn, call),
    toolFinished: (message, durationMs) => {
      inputs.callFinished(message.toolCallId);
      events.finishToolCall(turn, message, durationMs);
    },
    interrupted: () => running.interrupted,
    ending: () => reports.ending?.() ?? false,
  };
}
