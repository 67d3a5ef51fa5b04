import { loadClientConfigProfile, type ClientConfigProfile } from '@temporalio/envconfig';

/**
 * The Temporal connection profile of `temporal.toml`, the file every Temporal tool reads (`TEMPORAL_CONFIG_FILE`, by
 * default `temporalio/temporal.toml` in the user's configuration folder; profile `TEMPORAL_PROFILE`, by default
 * `default`). Only the file: durable-agent reads the `TEMPORAL_*` variables itself, so that a bad value is a
 * ConfigError naming its variable, and a variable wins over the profile.
 */
export interface TemporalProfile {
  settings: ClientConfigProfile;
  /** Where a setting came from, for error messages: `profile "prod" of ~/.config/temporalio/temporal.toml`. */
  source: string;
}

type Env = Record<string, string | undefined>;

/** Errors are returned as a message, so that the caller throws its own ConfigError. */
export function readTemporalProfile(env: Env): TemporalProfile | { problem: string } {
  const variables = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const profileName = variables.TEMPORAL_PROFILE ?? 'default';
  const file = variables.TEMPORAL_CONFIG_FILE ?? 'the default temporal.toml';
  try {
    const settings = loadClientConfigProfile({ disableEnv: true, overrideEnvVars: variables });
    return { settings, source: `profile ${JSON.stringify(profileName)} of ${file}` };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      problem:
        `Cannot read the Temporal connection profile ${JSON.stringify(profileName)} (TEMPORAL_PROFILE) from ${file} ` +
        `(TEMPORAL_CONFIG_FILE): ${reason}. Name a profile the file has, or a valid TOML file.`,
    };
  }
}
