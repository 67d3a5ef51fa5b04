import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';

/**
 * The replay corpus: test/fixtures/releases/<version>/, one directory per release listed in releases.json (written by
 * scripts/record-histories.mjs with `--release <version>`), plus pre-release directories that releases.json does not
 * list (each with a README.md saying what it is). Every directory has a manifest.json with one entry per history.
 */

export const RELEASES_DIR = fileURLToPath(new URL('../fixtures/releases/', import.meta.url));
const RELEASES_FILE = fileURLToPath(new URL('../../releases.json', import.meta.url));

export interface Release {
  version: string;
  commit: string;
  date: string;
  histories: string;
}

/** What manifest.json says of one history file. */
export interface ManifestEntry {
  file: string;
  scenario: string;
  /** `finished` (whole runs), or what was pending when it was exported: `mid-model-call`, `awaiting-approval`, ... */
  state: string;
  workflowId: string;
  /** Payloads encrypted with the key of test/codec/fixture-key.ts. */
  encrypted: boolean;
}

export interface Manifest {
  version: string;
  histories: ManifestEntry[];
}

export type CorpusHistory = HistoryAndWorkflowId & ManifestEntry & { history: ReturnType<typeof historyFromJSON> };

/** The releases of releases.json, oldest first. */
export function releases(): Release[] {
  return (JSON.parse(readFileSync(RELEASES_FILE, 'utf8')) as { releases: Release[] }).releases;
}

/** The corpus directories (a version each), sorted. */
export function corpusVersions(): string[] {
  if (!existsSync(RELEASES_DIR)) return [];
  return readdirSync(RELEASES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

export function readManifest(version: string): Manifest {
  return JSON.parse(readFileSync(path.join(RELEASES_DIR, version, 'manifest.json'), 'utf8')) as Manifest;
}

/** The history files of a corpus directory (every .json but the manifest), sorted. */
export function historyFiles(version: string): string[] {
  return readdirSync(path.join(RELEASES_DIR, version))
    .filter((file) => file.endsWith('.json') && file !== 'manifest.json')
    .sort();
}

/** Every history of a corpus directory as the replayer takes them, with what its manifest says of it. */
export function loadCorpus(version: string): CorpusHistory[] {
  return readManifest(version).histories.map((entry) => ({
    ...entry,
    history: historyFromJSON(JSON.parse(readFileSync(path.join(RELEASES_DIR, version, entry.file), 'utf8'))),
  }));
}
