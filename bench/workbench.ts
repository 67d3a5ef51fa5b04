import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
// Not '../src/testing/index.js': its agent module imports @temporalio/proto by name, which plain Node ESM rejects.
import { createLocalEnvironment } from '../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../src/testing/scripted-model/index.js';
import { ContenderProcess } from './contender-process.js';
import type { ContenderDefinition } from './contenders/index.js';
import { MIB, type Measured } from './figures.js';
import { log } from './log.js';
import { childProcessIds, processCpuMs } from './machine.js';
import { repoRoot } from './options.js';
import { benchScript, type TurnSpec } from './workload.js';

export interface RunningContender {
  definition: ContenderDefinition;
  process: ContenderProcess;
  peakRssBytes: number;
}

/**
 * What every contender shares: one Temporal dev server, one scripted model (served by this process) and a client
 * that reads histories. Measures a batch with the CPU the server and the model spent on it.
 */
export class Workbench {
  private constructor(
    readonly env: TestWorkflowEnvironment,
    readonly model: ScriptedModel,
    private readonly historyConnection: Connection,
    /** Reads histories whichever SDK wrote them; a long one can exceed gRPC's default 4 MB message. */
    readonly historyClient: Client,
    /** The dev server's process, for its CPU time (undefined off Linux). */
    private readonly serverPid: number | undefined,
  ) {}

  static async open(serverArgs: string[]): Promise<Workbench> {
    const model = await startScriptedModel({ script: benchScript, name: 'the benchmark script' });
    let env: TestWorkflowEnvironment | undefined;
    let historyConnection: Connection | undefined;
    try {
      env = await createLocalEnvironment({ extraArgs: serverArgs });
      const serverPid = childProcessIds('start-dev')[0];
      historyConnection = await Connection.connect({
        address: env.address,
        channelArgs: { 'grpc.max_receive_message_length': 512 * MIB },
      });
      const historyClient = new Client({ connection: historyConnection, namespace: env.namespace ?? 'default' });
      log(`dev server at ${env.address}${serverPid ? ` (pid ${serverPid})` : ''}, scripted model at ${model.baseUrl}`);
      return new Workbench(env, model, historyConnection, historyClient, serverPid);
    } catch (error) {
      await model.close();
      await historyConnection?.close();
      await env?.teardown();
      throw error;
    }
  }

  get namespace(): string {
    return this.env.namespace ?? 'default';
  }

  /** Start a contender's process against this server and model; `execArgv` e.g. for a CPU profile. */
  startContender(definition: ContenderDefinition, execArgv: string[]): Promise<ContenderProcess> {
    return ContenderProcess.start(
      definition.name,
      definition.script,
      {
        address: this.env.address,
        namespace: this.namespace,
        modelBaseUrl: this.model.baseUrl,
        mcpServerScript: `${repoRoot}bench/dist/src/testing/mcp-test-server.js`,
        taskQueue: `bench-${definition.name}`,
      },
      definition.env,
      execArgv,
    );
  }

  /** One batch of `turns` one-turn conversations, `concurrency` at a time; keeps the contender's peak RSS. */
  async measureBatch(
    contender: RunningContender,
    spec: TurnSpec,
    concurrency: number,
    turns: number,
  ): Promise<Measured> {
    const serverBefore = this.serverCpuMs();
    const parentBefore = process.cpuUsage();
    const result = await contender.process.batch({ turns, concurrency, spec });
    const serverAfter = this.serverCpuMs();
    const parent = process.cpuUsage(parentBefore);
    this.model.reset(benchScript);
    contender.peakRssBytes = Math.max(contender.peakRssBytes, result.peakRssBytes);
    return {
      result,
      serverCpuMs: serverBefore === undefined || serverAfter === undefined ? undefined : serverAfter - serverBefore,
      modelServerCpuMs: (parent.user + parent.system) / 1000,
    };
  }

  private serverCpuMs(): number | undefined {
    return this.serverPid === undefined ? undefined : processCpuMs(this.serverPid);
  }

  async close(): Promise<void> {
    await this.model.close();
    await this.historyConnection.close();
    await this.env.teardown();
  }
}

/** What the stages of a run share: the workbench, the contenders running on it, and what went wrong so far. */
export interface RunContext {
  workbench: Workbench;
  running: RunningContender[];
  /** Contenders that failed a warm-up or a batch: they run no more batches and their history is not measured. */
  failed: Set<string>;
  /** Everything that went wrong without stopping the run, as `<contender>: <what>`. */
  problems: string[];
}
