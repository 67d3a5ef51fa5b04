import { ConfigError } from '../config/index.js';

/** What `durable-agent serve` and `durable-agent token` read from the environment (docs/streaming.md, "Tokens"). */
export interface ServeEnvironment {
  /** `DURABLE_AGENT_SERVE_TOKEN`: the operator token. */
  token?: string;
  /** `DURABLE_AGENT_SERVE_SECRET`: the secret that signs scoped tokens. */
  secret?: string;
  /** `DURABLE_AGENT_SERVE_ALLOWED_HOSTS`: comma-separated host names. */
  allowedHosts: string[];
  /** `DURABLE_AGENT_SERVE_ALLOWED_ORIGINS`: comma-separated origins. */
  allowedOrigins: string[];
}

type Env = Record<string, string | undefined>;

export function readServeEnvironment(env: Env = process.env): ServeEnvironment {
  const token = text(env, 'DURABLE_AGENT_SERVE_TOKEN');
  const secret = text(env, 'DURABLE_AGENT_SERVE_SECRET');
  return {
    ...(token !== undefined ? { token } : {}),
    ...(secret !== undefined ? { secret } : {}),
    allowedHosts: list(env, 'DURABLE_AGENT_SERVE_ALLOWED_HOSTS'),
    allowedOrigins: list(env, 'DURABLE_AGENT_SERVE_ALLOWED_ORIGINS').map((origin) =>
      checkOrigin(origin, 'DURABLE_AGENT_SERVE_ALLOWED_ORIGINS'),
    ),
  };
}

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** An origin as browsers send it: `scheme://host[:port]`, no path; or `*`. */
export function checkOrigin(origin: string, where: string): string {
  if (origin === '*') return origin;
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.origin !== origin) {
    throw new ConfigError(
      `Invalid origin ${JSON.stringify(origin)} in ${where}: expected scheme://host[:port] with no path or trailing ` +
        'slash, such as https://app.example.com or http://localhost:5173.',
    );
  }
  return origin;
}
