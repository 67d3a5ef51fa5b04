import { tableContextWindow } from '../shared/model-windows.js';
import { PROVIDER_COMPACTION } from '../shared/provider-compaction.js';

/** The settings the window reads (`ConversationSettings`' `compaction` and `contextWindow`). */
export interface ContextWindowSettings {
  compaction?: boolean | 'provider';
  contextWindow?: number;
  maxInputTokens?: number;
}

/** What a conversation knows of its model's window, carried from run to run (`ConversationState.contextWindow`). */
export interface CarriedContextWindow {
  /** The model the conversation's last turn used (the worker's default when the settings name none). */
  model?: string;
  /** The window a refusal showed, in estimated tokens, for the model it refused with. */
  learned?: { model: string; tokens: number };
  /**
   * Estimated tokens of the tools the last turn offered.
   * @asType integer
   * @minimum 0
   */
  toolTokens?: number;
}

/**
 * The conversation's view of its model's window (docs/models.md#compaction): `settings.contextWindow`, else the table
 * of src/shared/model-windows.ts, and the lower of that and what a refusal showed. Unknown (`undefined`) for a model
 * the table does not know and no refusal has shown yet: compaction then waits for a refusal.
 */
export class ContextWindow {
  /** The model the last turn used. */
  private lastModel: string | undefined;
  /** Estimated tokens of the tools the last turn offered (0 until a turn listed them). */
  toolTokens: number;
  private learned: { model: string; tokens: number } | undefined;

  /**
   * @param offset the whole-conversation index of the run's first message (`transcriptOffset`), for what a summary
   *   records.
   */
  constructor(
    private readonly settings: ContextWindowSettings,
    carried: CarriedContextWindow | undefined,
    readonly offset = 0,
  ) {
    this.lastModel = carried?.model;
    this.learned = carried?.learned;
    this.toolTokens = carried?.toolTokens ?? 0;
  }

  get model(): string | undefined {
    return this.lastModel;
  }

  /** A turn named its model: what a refusal taught before any turn named one (the first turn's) is its. */
  set model(name: string | undefined) {
    this.lastModel = name;
    if (name !== undefined && this.learned?.model === '') this.learned = { ...this.learned, model: name };
  }

  /**
   * Whether a context-length refusal compacts with a summary and retries: `settings.compaction`, by default on unless
   * the settings chose trimming (`maxInputTokens`); on too with `"provider"`, as the fallback of the provider's own.
   */
  get enabled(): boolean {
    const setting = this.settings.compaction;
    if (setting === PROVIDER_COMPACTION) return true;
    return typeof setting === 'boolean' ? setting : this.settings.maxInputTokens === undefined;
  }

  /** `settings.compaction: "provider"`: the provider compacts before the window fills, so no summary comes before. */
  get byProvider(): boolean {
    return this.settings.compaction === PROVIDER_COMPACTION;
  }

  /** The window of `model` (default the last turn's), in estimated tokens, or `undefined` when unknown. */
  windowOf(model: string | undefined): number | undefined {
    const name = model ?? this.lastModel ?? '';
    const override = this.settings.contextWindow;
    const configured = typeof override === 'number' && override > 0 ? override : tableContextWindow(name);
    const learned = this.learned?.model === name ? this.learned.tokens : undefined;
    if (configured === undefined) return learned;
    return learned === undefined ? configured : Math.min(configured, learned);
  }

  /** A refusal showed that `model`'s window is about `tokens`. */
  learn(model: string | undefined, tokens: number): void {
    const name = model ?? this.lastModel ?? '';
    const known = this.learned?.model === name ? this.learned.tokens : Infinity;
    this.learned = { model: name, tokens: Math.min(known, tokens) };
  }

  /** What the next run starts from; `undefined` while nothing is known (a state as earlier releases wrote it). */
  carried(): CarriedContextWindow | undefined {
    if (this.lastModel === undefined && this.learned === undefined && this.toolTokens === 0) return undefined;
    return {
      ...(this.lastModel !== undefined ? { model: this.lastModel } : {}),
      ...(this.learned ? { learned: this.learned } : {}),
      ...(this.toolTokens > 0 ? { toolTokens: this.toolTokens } : {}),
    };
  }
}
