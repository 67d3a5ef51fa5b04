import { Ajv, type ValidateFunction } from 'ajv';
import { canonicalJson } from '../shared/digest.js';
import type { JsonObject } from '../shared/types.js';

/**
 * Arguments a person edited, checked against the tool's input schema before an approval is accepted. Ajv compiles
 * plain JavaScript and does no I/O, so it runs in the workflow sandbox, synchronously, in the update validator; the
 * same schema and arguments always give the same answer, so replay takes the same path. Tools' schemas come from many
 * servers: unknown keywords and formats are ignored (the server validates again), not refused.
 */

/**
 * Made on first use: each workflow run evaluates this module anew in the sandbox, and building an Ajv (it compiles
 * its meta-schemas) cost about 2 ms of worker CPU per run, for runs that mostly never check a schema.
 */
let ajv: Ajv | undefined;
/** Compiled validators by schema, within the run that compiled them (pure functions of their schema). */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 200;

/** What is wrong with `value` as arguments for a tool with input schema `schema`, as readable lines; empty if valid. */
export function argumentErrors(schema: JsonObject, value: JsonObject): string[] {
  return schemaErrors(schema, value, "the tool's input schema");
}

/** What is wrong with `value` under `schema`, as readable lines; empty if valid. `what` names the schema. */
export function schemaErrors(schema: JsonObject, value: unknown, what: string): string[] {
  let validate: ValidateFunction;
  try {
    validate = validator(schema);
  } catch (error) {
    return [`${what} cannot be checked (${error instanceof Error ? error.message : String(error)})`];
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
}

/** Why `schema` cannot be used to check values (it does not compile), or `undefined` when it can. */
export function schemaProblem(schema: JsonObject): string | undefined {
  try {
    validator(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function validator(schema: JsonObject): ValidateFunction {
  // `$schema` names a draft this Ajv may not know (servers write draft-07 and 2020-12): the keywords are what matter.
  const { $schema: _draft, ...rest } = schema;
  const key = canonicalJson(rest);
  let validate = compiled.get(key);
  if (validate === undefined) {
    ajv ??= new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
    validate = ajv.compile(rest);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  return validate;
}
