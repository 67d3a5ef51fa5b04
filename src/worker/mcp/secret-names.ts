import { describeValue } from '../../shared/errors.js';

/**
 * The `secrets` key of a server in the `mcpServers` file: names whose values are secrets whatever they are called,
 * for a credential under a name that does not look secret (`"secrets": ["DEPLOY"]` for `"--key=${DEPLOY}"`). A name
 * is a `${VAR}` the entry uses or a key of its `env`; anything else is a mistake worth an error, since a misspelt name
 * would leave the secret it meant unprotected.
 */
export function parseSecretNames(
  entry: Record<string, unknown>,
  error: (key: string, problem: string) => Error,
): string[] | undefined {
  const value = entry.secrets;
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw error('secrets', `expected an array of variable names such as ["API_KEY"], got ${describeValue(value)}.`);
  }
  const { secrets: _names, ...rest } = entry;
  const variables = [...JSON.stringify(rest).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g)].map(
    (match) => match[1]!,
  );
  const env = entry.env !== null && typeof entry.env === 'object' ? Object.keys(entry.env) : [];
  const known = [...new Set([...variables, ...env])];
  value.forEach((name: string, index) => {
    if (known.includes(name)) return;
    const choices = known.length === 0 ? 'it uses none' : `it has ${known.map((item) => `"${item}"`).join(', ')}`;
    throw error(
      `secrets[${index}]`,
      `"${name}" is neither a \${VAR} of this entry nor a key of its "env" (${choices}); ` +
        'list the names whose values are secrets.',
    );
  });
  return value;
}
